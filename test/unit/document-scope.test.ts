/**
 * The documents store's scoping (issue 50), on a real folder: a name is read only for the onboarding
 * whose folder it is in (its workflow ID) or which first used the handed-out folder it is in; a link
 * cannot carry a name out of its applicant's folder, nor an applicant's folder be another's.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DocumentStore } from '../../src/documents/store';
import { SAMPLE_PNG } from '../../src/sandbox/kyc-samples';
import { documentScope } from '../../src/shared/kyc-rules';

const A = 'onboard-cardholder/applicant-a';
const B = 'onboard-cardholder/applicant-b';

describe('documents store scopes', () => {
  const root = mkdtempSync(join(tmpdir(), 'document-scope-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const store = new DocumentStore(root);
  const refusal = async (name: string, onboarding: string) => {
    const refused = await store.inspect(name, 'image/png', onboarding);
    return refused && { rule: refused.rule, ofName: refused.ofName };
  };

  it("an onboarding reads its own folder's documents, not another's, and not one outside any applicant's folder", async () => {
    store.write(`${A}/passport.png`, SAMPLE_PNG);
    store.write('applicant-42/passport.png', SAMPLE_PNG);
    expect(await refusal(`${A}/passport.png`, A)).toBeUndefined();
    expect(await store.read(`${A}/passport.png`, 'image/png', A)).toEqual(SAMPLE_PNG);
    for (const name of [`${A}/passport.png`, 'applicant-42/passport.png']) {
      expect(await refusal(name, B)).toEqual({ rule: expect.stringMatching(/^must name a document stored for this applicant \(in this onboarding's folder onboard-cardholder\/applicant-b\//), ofName: true });
      await expect(store.read(name, 'image/png', B)).rejects.toMatchObject({ ofName: true });
    }
    // A prefix of the folder's name is not the folder.
    expect(documentScope('onboard-cardholder/applicant-ab/passport.png', A)).toBeUndefined();
  });

  it('a handed-out folder is claimed by the first onboarding that uses it; inspect alone claims nothing', async () => {
    const folder = store.handOut();
    expect(folder).toMatch(/^applicants\/[0-9a-f]{32}$/);
    const name = store.write(`${folder}/passport.png`, SAMPLE_PNG);
    expect(await refusal(name, B)).toBeUndefined();
    expect(await refusal(name, A)).toBeUndefined();
    expect(await store.claim(name, A)).toBeUndefined();
    expect(await store.read(name, 'image/png', A)).toEqual(SAMPLE_PNG);
    expect(await refusal(name, B)).toEqual({ rule: expect.stringMatching(/another onboarding uses its folder/), ofName: true });
    expect(await store.claim(name, B)).toMatchObject({ ofName: true });
    await expect(store.read(name, 'image/png', B)).rejects.toMatchObject({ ofName: true });
  });

  it("a link in B's folder to A's document, or B's folder linked to A's, is refused", async () => {
    store.write(`${A}/selfie.png`, SAMPLE_PNG);
    mkdirSync(join(root, B), { recursive: true });
    symlinkSync(join(root, A, 'selfie.png'), join(root, B, 'selfie.png'));
    expect(await refusal(`${B}/selfie.png`, B)).toEqual({ rule: expect.stringMatching(/links out of the applicant's folder/), ofName: true });
    const C = 'onboard-cardholder/applicant-c';
    symlinkSync(join(root, A), join(root, C));
    expect(await refusal(`${C}/selfie.png`, C)).toEqual({ rule: expect.stringMatching(/its folder is a link/), ofName: true });
  });
});
