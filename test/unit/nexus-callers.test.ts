/**
 * NEXUS_CALLERS (src/nexus/callers.ts, read by config.ts; docs/nexus.md, "Who can call"): who may
 * call the Nexus service, validated once at start with one-line errors naming the variable and the
 * rule. Unset: no caller (no Nexus worker), except development's one caller `dev`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { NEXUS_OPERATIONS } from '../../src/client/nexus-contract';
import { DEFAULT_PAYOUT_APPROVAL_WAIT_MS, maxKeyLength, payoutApprovalGate, scopedKey } from '../../src/nexus/callers';
import { nexusCallerQueue, workflowQueues } from '../../src/shared/task-queues';

const callers = (value: unknown) => loadConfig({ NEXUS_CALLERS: typeof value === 'string' ? value : JSON.stringify(value) }).nexus.callers;
const refusal = (value: unknown) => {
  try {
    callers(value);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('not refused');
};

test('unset: no caller outside development (no Nexus worker runs); in development the one caller dev, allowed every operation', () => {
  expect(loadConfig({}).nexus.callers).toEqual([]);
  expect(loadConfig({ CARD_ISSUING_DEVELOPMENT: 'true' }).nexus.callers).toEqual([{ name: 'dev', namespace: 'callers', operations: NEXUS_OPERATIONS }]);
  // Named callers replace development's.
  expect(loadConfig({ CARD_ISSUING_DEVELOPMENT: 'true', NEXUS_CALLERS: '[]' }).nexus.callers).toEqual([]);
});

test('a list of callers, from the variable or from the file it names with @', () => {
  const list = [
    { name: 'team-a', namespace: 'team-a-ns', operations: ['fundCard', 'cardState'], payoutLimit: 50_000 },
    { name: 'b2', namespace: 'payments.prod', operations: ['sendPayout'], issueLimit: 0, fundLimit: 100 },
  ];
  expect(callers(list)).toEqual(list);
  const dir = mkdtempSync(join(tmpdir(), 'nexus-callers-'));
  try {
    writeFileSync(join(dir, 'callers.json'), JSON.stringify(list));
    expect(callers(`@${join(dir, 'callers.json')}`)).toEqual(list);
    expect(refusal(`@${join(dir, 'missing.json')}`)).toBe(`configuration: NEXUS_CALLERS names the file ${join(dir, 'missing.json')}, which cannot be read (ENOENT)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('each rule broken is one line naming the variable, the place and the rule', () => {
  const ok = { name: 'team-a', namespace: 'team-a-ns', operations: ['fundCard'] };
  expect(refusal('not json')).toBe('configuration: NEXUS_CALLERS must be a JSON array of callers, or @path/to/file.json holding one: it is not JSON');
  expect(refusal({ name: 'team-a' })).toBe('configuration: NEXUS_CALLERS must be a JSON array of callers, or @path/to/file.json holding one');
  expect(refusal([ok, { ...ok, name: 'Team_A' }])).toBe('configuration: NEXUS_CALLERS[1].name must be 1-16 characters of [a-z0-9-]');
  expect(refusal([{ ...ok, name: 'a'.repeat(17) }])).toBe('configuration: NEXUS_CALLERS[0].name must be 1-16 characters of [a-z0-9-]');
  expect(refusal([ok, ok])).toBe('configuration: NEXUS_CALLERS[1].name must be unique: "team-a" is named twice');
  expect(refusal([{ ...ok, namespace: '' }])).toMatch(/^configuration: NEXUS_CALLERS\[0\]\.namespace must be the caller's Temporal namespace/);
  expect(refusal([{ ...ok, operations: ['fundCard', 'revealSensitive'] }])).toBe(`configuration: NEXUS_CALLERS[0].operations[1] must name operations of the service: ${NEXUS_OPERATIONS.join(', ')}`);
  expect(refusal([{ ...ok, operations: [] }])).toBe('configuration: NEXUS_CALLERS[0].operations must name at least one operation');
  expect(refusal([{ ...ok, payoutLimit: 10.5 }])).toBe('configuration: NEXUS_CALLERS[0].payoutLimit must be a whole number of cents');
  expect(refusal([{ ...ok, fundLimit: -1 }])).toBe('configuration: NEXUS_CALLERS[0].fundLimit must be a whole number of cents, 0 or more');
  // A misspelt limit would limit nothing: refused.
  expect(refusal([{ ...ok, payoutlimit: 100 }])).toBe('configuration: NEXUS_CALLERS[0] has no field "payoutlimit": a caller takes name, namespace, operations, payoutLimit, payoutApprovalAbove, payoutApprovers, payoutApprovalWaitMs, issueLimit, fundLimit');
  for (const message of [refusal('not json'), refusal([ok, ok])]) expect(message).not.toContain('\n');
});

test('a caller\'s keys, queue and the deployment\'s workflow queues', () => {
  expect(scopedKey({ name: 'team-a' }, 'order-1')).toBe('team-a_order-1');
  expect(maxKeyLength({ name: 'team-a' })).toBe(57);
  expect(nexusCallerQueue('cards', 'team-a')).toBe('cards-nexus-team-a');
  expect(workflowQueues('cards', ['team-a', 'team-b'])).toEqual(['cards', 'cards-entities', 'cards-nexus-team-a', 'cards-nexus-team-b']);
});

test('payouts above payoutApprovalAbove wait for an approver: the band, the approvers and the wait are checked together, each rule one line naming its field', () => {
  const ok = { name: 'payments', namespace: 'payments-ns', operations: ['sendPayout'] };
  const held = { ...ok, payoutLimit: 500_000, payoutApprovalAbove: 50_000, payoutApprovers: ['ops-alice', 'ops-bob'] };
  expect(callers([held])).toEqual([held]);
  expect(callers([{ ...held, payoutLimit: undefined, payoutApprovalWaitMs: 3_600_000 }])).toEqual([{ ...held, payoutLimit: undefined, payoutApprovalWaitMs: 3_600_000 }]);
  expect(refusal([{ ...held, payoutApprovalAbove: 500_000 }])).toBe(
    "configuration: NEXUS_CALLERS[0].payoutApprovalAbove must be below payoutLimit (500000): a payout above payoutLimit is refused, one between the two waits for an operator's approval",
  );
  expect(refusal([{ ...held, payoutApprovers: undefined }])).toMatch(/^configuration: NEXUS_CALLERS\[0\]\.payoutApprovers is required with payoutApprovalAbove: the key IDs \(on CARD_ACTION_TRUSTED_KEYS\)/);
  expect(refusal([{ ...held, payoutApprovers: [] }])).toBe("configuration: NEXUS_CALLERS[0].payoutApprovers must name at least one approver's key ID");
  expect(refusal([{ ...held, payoutApprovers: ['ops alice'] }])).toBe('configuration: NEXUS_CALLERS[0].payoutApprovers[0] must be key IDs on CARD_ACTION_TRUSTED_KEYS (must be 1-32 characters of [A-Za-z0-9_-])');
  expect(refusal([{ ...held, payoutApprovalWaitMs: 10 }])).toBe('configuration: NEXUS_CALLERS[0].payoutApprovalWaitMs must be a whole number of milliseconds from 1000 to 2592000000 (30 days)');
  expect(refusal([{ ...ok, payoutApprovers: ['ops-alice'] }])).toBe('configuration: NEXUS_CALLERS[0].payoutApprovers means nothing without payoutApprovalAbove (the amount above which a payout waits for an approval)');
  expect(refusal([{ ...ok, payoutApprovalWaitMs: 60_000 }])).toBe('configuration: NEXUS_CALLERS[0].payoutApprovalWaitMs means nothing without payoutApprovalAbove (the amount above which a payout waits for an approval)');

  // The gate the handler puts in the flow's input: none at or below the amount, none for a caller without one.
  const [caller] = callers([held]);
  expect(payoutApprovalGate(caller, 50_000)).toBeUndefined();
  expect(payoutApprovalGate(caller, 50_001)).toEqual({ caller: 'payments', approvers: ['ops-alice', 'ops-bob'], above: 50_000, waitMs: DEFAULT_PAYOUT_APPROVAL_WAIT_MS });
  expect(payoutApprovalGate(callers([{ ...ok, payoutLimit: 10 }])[0], 1_000_000)).toBeUndefined();
});
