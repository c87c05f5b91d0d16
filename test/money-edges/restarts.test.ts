/**
 * A restart of a money flow's workflow ID (a caller retrying a flow that failed, timed out or was
 * terminated after its first run's POST took effect) moves nothing more, whichever key derivation
 * the first run used. The sandbox's ledger is the truth.
 */
import { join } from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { loadConfig } from '../../src/config';
import { createPayloadCodec } from '../../src/codec/payload-codec';
import { createProviderClient } from '../../src/provider/client';
import { legacyIdempotencyKey } from '../../src/shared/ids';
import { fixtureBins } from '../helpers/provider';
import { issueTestCard } from '../helpers/flows';
import { uniqueId, type Stack } from '../helpers/stack';
import { REPLAY_CODEC_ENV } from '../replay/codec';
import { loadHistory } from '../replay/load-history';
import { PROFILES, TIMINGS, cardBalance, faults, ledger, loseAfterEffect, requests, stackOn } from './helpers';

const HANG_AFTER_EFFECT = { hangRate: 1, afterEffect: true };

describe('the pre-SHA-256 key derivation', () => {
  test('reproduces the key a recorded fundCard of that version sent (test/unit/fixtures/fund-card-fnv-key.json)', async () => {
    const events = loadHistory(join(__dirname, '../unit/fixtures/fund-card-fnv-key.json')).events ?? [];
    const workflowId = events[0].workflowExecutionStartedEventAttributes?.workflowId;
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'moveMoney')!.activityTaskScheduledEventAttributes!;
    const codec = createPayloadCodec(loadConfig(REPLAY_CODEC_ENV).codec);
    const [payload] = await codec.decode(scheduled.input!.payloads!);
    const sent = defaultPayloadConverter.fromPayload<{ idempotencyKey: string }>(payload);
    expect(workflowId).toEqual(expect.any(String));
    expect(sent.idempotencyKey).toBe(legacyIdempotencyKey('fund', workflowId!));
  });
});

describe.each(PROFILES)('a restart of the same workflow ID, on the %s profile', (profile) => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const start = (type: string, workflowId: string, input: Record<string, unknown>) =>
    stack.client.workflow.start(type, { taskQueue: stack.taskQueue, workflowId, args: [{ timings: TIMINGS, ...input }] });

  test('fundCard: the first run funded and was lost; the restart completes and funds nothing more', async () => {
    stack = await stackOn(profile, { faults: { hangMs: 20_000 } });
    const card = await issueTestCard(stack, 1000);
    await faults(stack, { 'POST /cards/{cardId}/funding': HANG_AFTER_EFFECT });
    const workflowId = uniqueId('fund-restart');
    await loseAfterEffect(await start('fundCard', workflowId, { cardId: card.cardId, amount: 1500 }), async () => (await cardBalance(stack, card.cardId)) === 2500);
    await faults(stack, {});
    const result = await (await start('fundCard', workflowId, { cardId: card.cardId, amount: 1500 })).result();
    expect(result.status).toBe('COMPLETED');
    expect(await cardBalance(stack, card.cardId)).toBe(2500);
    expect((await ledger(stack)).violations).toEqual([]);
  }, 90_000);

  test('case 7: beside the real earlier run (SHA-256 key, funded), a start-delayed run terminated before its first task does not make the restart post under the FNV key: funded once', async () => {
    stack = await stackOn(profile, { faults: { hangMs: 20_000 } });
    const card = await issueTestCard(stack, 1000);
    await faults(stack, { 'POST /cards/{cardId}/funding': HANG_AFTER_EFFECT });
    const workflowId = uniqueId('fund-case7');
    await loseAfterEffect(await start('fundCard', workflowId, { cardId: card.cardId, amount: 1500 }), async () => (await cardBalance(stack, card.cardId)) === 2500);
    await faults(stack, {});
    // A run the lookup cannot recognise: it never ran a task, so it holds no marker (and never posted).
    const delayed = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, amount: 1500, timings: TIMINGS }], startDelay: '1 hour' });
    await delayed.terminate('test: a start-delayed run, terminated before its first task');
    const result = await (await start('fundCard', workflowId, { cardId: card.cardId, amount: 1500 })).result();
    expect(result.status).toBe('COMPLETED');
    expect(result.idempotencyKey).not.toBe(legacyIdempotencyKey('fund', workflowId));
    expect(await cardBalance(stack, card.cardId)).toBe(2500);
    expect((await ledger(stack)).violations).toEqual([]);
  }, 90_000);

  test('fundCard: a first run of the FNV-key version funded under its key; the restart finds it and funds nothing more', async () => {
    stack = await stackOn(profile);
    const card = await issueTestCard(stack, 1000);
    const workflowId = uniqueId('fund-legacy');
    // The first run, as the version before SHA-256 keys ran it: started, its POST sent under the FNV key, then lost.
    await stack.stopWorkers();
    await (await start('fundCard', workflowId, { cardId: card.cardId, amount: 1800 })).terminate('test: the first run of an older version');
    const provider = createProviderClient(stack.config.provider);
    await provider.fundCard(card.cardId, { amount: 1800 }, { idempotencyKey: legacyIdempotencyKey('fund', workflowId) });
    expect(await cardBalance(stack, card.cardId)).toBe(2800);
    await stack.startWorkers();
    const result = await (await start('fundCard', workflowId, { cardId: card.cardId, amount: 1800 })).result();
    expect(result).toMatchObject({ status: 'COMPLETED', idempotencyKey: legacyIdempotencyKey('fund', workflowId) });
    expect(await cardBalance(stack, card.cardId)).toBe(2800);
    // A record showing only a status (minimal) is confirmed by the same POST under its key: the original answer.
    expect(await requests(stack, 'fundCard')).toBe(profile === 'contract' ? 1 : 2);
    expect((await ledger(stack)).violations).toEqual([]);
  }, 90_000);

  test('issueCard: the first run created the card but never read the answer; the restart finds that card, no second one', async () => {
    stack = await stackOn(profile, { cardProvisioningMs: 300, faults: { hangMs: 20_000 } });
    const { plain } = await fixtureBins(stack);
    await faults(stack, { 'POST /cards': HANG_AFTER_EFFECT });
    const workflowId = uniqueId('issue-restart');
    const input = { cardBinId: plain.cardBinId, initialAmount: 1300, firstName: 'Ada', lastName: 'Lovelace' };
    await loseAfterEffect(await start('issueCard', workflowId, input), async () => (await ledger(stack)).cards.length === 1);
    await faults(stack, {});
    const card = await (await start('issueCard', workflowId, input)).result();
    const { cards, totals } = await ledger(stack);
    expect(cards.map((c) => c.cardId)).toEqual([card.cardId]);
    expect(totals.issued).toBe(1300);
  }, 90_000);

  test('purchaseEsim: the first run was charged and lost; the restart answers the same order, charged once', async () => {
    stack = await stackOn(profile, { faults: { hangMs: 20_000 } });
    await faults(stack, { 'POST /esim/purchase': HANG_AFTER_EFFECT });
    const charged = async () => (await ledger(stack)).totals.charged;
    const workflowId = uniqueId('esim-restart');
    await loseAfterEffect(await start('purchaseEsim', workflowId, { planNo: 'epln_global_1gb' }), async () => (await charged()) > 0);
    const once = await charged();
    await faults(stack, {});
    const order = await (await start('purchaseEsim', workflowId, { planNo: 'epln_global_1gb' })).result();
    expect(order.status).toBe('ISSUED');
    expect(await charged()).toBe(once);
    expect((await ledger(stack)).violations).toEqual([]);
  }, 90_000);

  test('sendPayout: the first run created the payout and was lost; the restart follows that payout, created once', async () => {
    stack = await stackOn(profile, { faults: { hangMs: 20_000 } });
    await faults(stack, { 'POST /payouts': HANG_AFTER_EFFECT });
    const merOrderNo = uniqueId('po').slice(0, 32);
    const input = { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 5000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819' };
    const charged = async () => (await ledger(stack)).totals.charged;
    const workflowId = `send-payout/${merOrderNo}`;
    await loseAfterEffect(await start('sendPayout', workflowId, input), async () => (await charged()) > 0);
    const once = await charged();
    await faults(stack, {});
    const payout = await (await start('sendPayout', workflowId, input)).result();
    expect(payout.merOrderNo).toBe(merOrderNo);
    expect(await charged()).toBe(once);
    // The first run's POST may still hang unanswered (uncounted); the restart sent none.
    expect(await requests(stack, 'createPayout')).toBeLessThanOrEqual(1);
    expect((await ledger(stack)).violations).toEqual([]);
  }, 90_000);
});
