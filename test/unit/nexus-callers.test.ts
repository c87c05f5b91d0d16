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
import { maxKeyLength, scopedKey } from '../../src/nexus/callers';
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
  expect(refusal([{ ...ok, payoutlimit: 100 }])).toBe('configuration: NEXUS_CALLERS[0] has no field "payoutlimit": a caller takes name, namespace, operations, payoutLimit, issueLimit, fundLimit');
  for (const message of [refusal('not json'), refusal([ok, ok])]) expect(message).not.toContain('\n');
});

test('a caller\'s keys, queue and the deployment\'s workflow queues', () => {
  expect(scopedKey({ name: 'team-a' }, 'order-1')).toBe('team-a_order-1');
  expect(maxKeyLength({ name: 'team-a' })).toBe(57);
  expect(nexusCallerQueue('cards', 'team-a')).toBe('cards-nexus-team-a');
  expect(workflowQueues('cards', ['team-a', 'team-b'])).toEqual(['cards', 'cards-entities', 'cards-nexus-team-a', 'cards-nexus-team-b']);
});
