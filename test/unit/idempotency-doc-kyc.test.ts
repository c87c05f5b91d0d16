/**
 * Issue 51: docs/idempotency.md said a restart of onboardCardholder sends the form and manual KYC
 * submissions again; the code never does (src/workflows/onboard-cardholder.ts; src/activities/kyc.ts's table). The behaviour itself is shown by
 * test/workflows/kyc-modes.test.ts ("a new start of the same workflow ID does not submit again") and
 * test/money-edges/restart-edges.test.ts (case 6); this keeps the doc saying the same. Pure: files only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

test('the doc says a KYC restart never submits again, as the code refuses it', () => {
  const doc = read('docs/idempotency.md');
  expect(read('src/workflows/onboard-cardholder.ts')).toContain('if (!earlier.cardholderId && earlier.mayHaveSubmitted) refuseResubmission(progress.mode);');
  const restartRow = doc.split('\n').find((line) => line.startsWith('| onboardCardholder |'));
  expect(restartRow).toBeDefined();
  expect(restartRow).toMatch(/no submission is sent again in any mode/);
  expect(doc).not.toMatch(/the form and manual submissions are sent again/);
  expect(doc).not.toMatch(/a restart sends them again/);
});
