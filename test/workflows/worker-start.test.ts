/**
 * A worker refuses to start in a namespace that lacks our search attributes: a card workflow that
 * sets MoneyMovedHour there would fail its task on every money update until somebody registered it.
 */
import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { loadConfig } from '../../src/config';
import { SEARCH_ATTRIBUTES } from '../../src/shared/search-attributes';
import { createWorkers } from '../../src/fleet/workers';
import { TEST_CODEC_KEY, TEST_PIN_KEYS, temporalAddress } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

jest.setTimeout(60_000);

test('a worker refuses to start in a namespace without our search attributes, naming each and the command that registers them', async () => {
  const namespace = `no-attributes-${randomUUID().slice(0, 8)}`;
  const connection = await Connection.connect({ address: temporalAddress() });
  try {
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    await waitUntil(async () => connection.workflowService.describeNamespace({ namespace }).then(() => true, () => false), 20_000, 'the namespace registered');
  } finally {
    await connection.close();
  }
  const config = loadConfig({ TEMPORAL_ADDRESS: temporalAddress(), TEMPORAL_NAMESPACE: namespace, TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`, PAYLOAD_CODEC_KEY: TEST_CODEC_KEY, PAYLOAD_CODEC_KEY_ID: 'test', PIN_SEAL_PRIVATE_KEY: TEST_PIN_KEYS.privateKey });
  const start = createWorkers({ config, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, enforceRateBudget: false });
  const names = Object.keys(SEARCH_ATTRIBUTES);
  expect(names).toContain('MoneyMovedHour');
  await expect(start).rejects.toThrow(`namespace ${namespace} lacks the search attribute(s) ${names.join(', ')}`);
  await expect(start).rejects.toThrow('temporal operator search-attribute create --namespace');
});
