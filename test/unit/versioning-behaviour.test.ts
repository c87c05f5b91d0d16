/**
 * docs/versioning.md, "Each workflow type's behaviour": every registered workflow type declares its
 * versioning behaviour beside it (declareVersioning), and the doc's table says the same. A type
 * that declared none would auto-upgrade silently, and a flow that did would need markers again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as workflows from '../../src/workflows';
import { onboardingRelay } from '../../src/workflows/onboarding-relay';

import type { DeclaresVersioning } from '../../src/workflows/lib/versioning';
import { PINNED_FLOWS, ROLLING_FLOWS } from '../../src/shared/pinned-flows';

// The Nexus relay runs from the Nexus workers' own bundle (fleet/nexus-bundle.ts), not from src/workflows' index.
const declared = [...Object.entries(workflows), ['onboardingRelay', onboardingRelay] as const].map(([type, fn]) => [type, (fn as DeclaresVersioning).versioningBehaviour] as const);

/** The doc's table: each row's types (in backticks) and its behaviour. */
function documented(): Map<string, string> {
  const doc = readFileSync(join(__dirname, '../../docs/versioning.md'), 'utf8');
  const table = doc.slice(doc.indexOf("### Each workflow type's behaviour"), doc.indexOf('### Activities across builds'));
  const rows = new Map<string, string>();
  for (const line of table.split('\n').filter((l) => l.startsWith('| `'))) {
    const [types, behaviour] = line.split('|').slice(1, 3);
    const value = behaviour.trim() === 'pinned' ? 'PINNED' : behaviour.trim() === 'auto-upgrade' ? 'AUTO_UPGRADE' : behaviour.trim();
    for (const [, type] of types.matchAll(/`([^`]+)`/g)) rows.set(type, value);
  }
  return rows;
}

test('every registered workflow type declares PINNED or AUTO_UPGRADE', () => {
  expect(declared.length).toBeGreaterThanOrEqual(20);
  expect(declared.filter(([, behaviour]) => behaviour !== 'PINNED' && behaviour !== 'AUTO_UPGRADE')).toEqual([]);
});

test('release 4: every workflow type is pinned, the short flows, the entity workflows, open items, attempts, the relay, reconciliation runs, payouts and onboarding', () => {
  const of = Object.fromEntries(declared);
  for (const type of ['fundCard', 'withdrawFromCard', 'issueCard', 'purchaseEsim', 'rechargeEsim', 'cardLifecycle', 'providerEntity', 'openItem', 'moneyAttempt', 'onboardingRelay', 'reconcile-money', 'reconcileMoney', 'sendPayout', 'onboardCardholder', 'trackPayout']) {
    expect([type, of[type]]).toEqual([type, 'PINNED']);
  }
  expect(declared.filter(([, behaviour]) => behaviour !== 'PINNED')).toEqual([]);
});

test("the release gate's short flows and the rolling ones are every type that declares PINNED, each in one list", () => {
  expect([...PINNED_FLOWS, ...ROLLING_FLOWS].sort()).toEqual(declared.filter(([, behaviour]) => behaviour === 'PINNED').map(([type]) => type).sort());
  expect(PINNED_FLOWS.filter((type) => (ROLLING_FLOWS as readonly string[]).includes(type))).toEqual([]);
});

test('docs/versioning.md names every type with the behaviour it declares', () => {
  const rows = documented();
  // The reconciliation row names the schedule names; their former names ("and their former names") follow them.
  const former: Record<string, string> = { reconcileMoney: 'reconcile-money', reconcileCards: 'reconcile-cards', refreshBins: 'refresh-bins', sweepStuck: 'sweep-stuck' };
  expect(declared.map(([type]) => [type, rows.get(former[type] ?? type)])).toEqual(declared.map(([type, behaviour]) => [type, behaviour]));
});
