/**
 * Release 2's gate (temporal/release-gate.ts, CHANGELOG "Upgrading to release 2"): while a short
 * flow that ran on an unversioned worker is open on the task queue, `deploy release-gate` exits 1
 * naming it and a versioned worker of release 2 refuses to start, naming it; once none is open, the
 * gate passes and the worker starts (a flow whose first workflow task has not completed does not
 * count). On the dev server, with the stack's unversioned worker as the
 * release-1 fleet. And release 3's marker gate (temporal/marker-gate.ts): `deploy marker-gate` exits 1
 * while a long-lived pinned type has a running run that is not pinned.
 */
import { randomUUID } from 'node:crypto';
import { createWorkers, type WorkerFleet } from '../../src/fleet/workers';
import { releaseGateQuery } from '../../src/temporal/release-gate';
import { runInProcess } from '../starter/cli-helpers';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';
import { issueTestCard } from '../helpers/flows';
import { readUntil, waitUntil } from '../helpers/wait';
import { requests } from '../money-edges/helpers';
import { entityWorkflowId } from '../../src/shared/ids';
import { ROLLING_FLOWS } from '../../src/shared/pinned-flows';

jest.setTimeout(120_000);

let stack: Stack;
afterAll(async () => stack?.close());

const gateCli = async () => {
  const run = await runInProcess(stack, ['deploy', 'release-gate', '--json']);
  return { code: run.code, json: JSON.parse(run.stdout) };
};

/** Release 2's worker: the same code, versioned (a build ID), on the stack's task queue. */
const release2Worker = (): Promise<WorkerFleet> =>
  createWorkers({
    config: { ...stack.config, temporal: { ...stack.config.temporal, deployment: { name: `gate-${randomUUID().slice(0, 8)}`, buildId: 'release-2', bootstrap: 'if-none' } } },
    taskQueue: stack.taskQueue,
    workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE,
    enforceRateBudget: false,
  });

test('an unversioned short flow open: the gate names it and release 2 refuses to start; none open: both pass', async () => {
  stack = await startStack({ cardProvisioningMs: 50 });
  const card = await issueTestCard(stack, 10_000);
  // A funding the provider holds PROCESSING: the flow has run workflow tasks on the unversioned worker and stays open.
  await stack.control('PUT', '/config', { operationProcessingMs: 60_000 });
  const workflowId = `fund-${randomUUID()}`;
  const open = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, amount: 1500, idempotencyKey: randomUUID(), timings: FAST_TIMINGS }] });
  await waitUntil(async () => (await requests(stack, 'fundCard')) >= 1, 30_000, 'the funding posted');
  await waitUntil(async () => (await stack.client.workflow.count(releaseGateQuery(stack.taskQueue))).count > 0, 30_000, 'visibility to list the open funding');

  const closed = await gateCli();
  expect(closed.code).toBe(1);
  expect(closed.json.error.type).toBe('ReleaseGateClosed');
  expect(closed.json.error.message).toContain(`fundCard ${workflowId}`);
  await expect(release2Worker()).rejects.toThrow(new RegExp(`release gate closed: 1 short flow\\(s\\).*fundCard ${workflowId}`));

  await open.terminate('the release-1 flow ended');
  // A short flow whose first workflow task has not completed (here: delayed an hour) carries no version either, but recorded nothing: not counted.
  const waiting = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId: `fund-${randomUUID()}`, startDelay: '1 hour', args: [{ cardId: card.cardId, amount: 100, idempotencyKey: randomUUID() }] });
  await waitUntil(async () => (await gateCli()).code === 0, 30_000, 'the gate to pass');
  expect((await gateCli()).json.result).toEqual({ passes: true, open: 0, flows: [] });
  const fleet = await release2Worker();
  const running = fleet.run();
  fleet.shutdown();
  await running;
  await waiting.terminate('test over');
});

test("release 3's marker gate: a card workflow that is not pinned (here: on the unversioned worker) closes it, naming the run; once it ended, the gate passes", async () => {
  // A stack of its own: the test above made a versioned build current on its queue (release 2's worker
  // bootstraps it), and with that build's workers gone a new flow there would wait for them.
  const own = await startStack({ cardProvisioningMs: 50 });
  try {
    const card = await issueTestCard(own, 1000);
    const cardWorkflow = entityWorkflowId('card', card.cardId);
    const markerCli = async () => {
      const run = await runInProcess(own, ['deploy', 'marker-gate', '--json']);
      return { code: run.code, json: JSON.parse(run.stdout) };
    };
    const closed = await readUntil(markerCli, (answer) => answer.code === 1 && answer.json.error.message.includes(cardWorkflow), 30_000);
    expect(closed.json.error.type).toBe('MarkerGateClosed');
    expect(closed.json.error.message).toContain(`cardLifecycle ${cardWorkflow}`);
    // Only the long-lived pinned types count (the card workflow, an attempt of its issuance if one is still watching), none of the short flows.
    const listed: Array<{ type: string; workflowId: string }> = closed.json.error.details[0].runs;
    expect(listed.filter((r) => !(ROLLING_FLOWS as readonly string[]).includes(r.type))).toEqual([]);
    expect(listed.map((r) => r.workflowId)).toContain(cardWorkflow);

    for (const run of listed) await own.client.workflow.getHandle(run.workflowId).terminate('test: the unpinned run ended').catch(() => undefined);
    await waitUntil(async () => (await markerCli()).code === 0, 30_000, 'the marker gate to pass');
    expect((await markerCli()).json.result).toEqual({ passes: true, open: 0, runs: [] });
  } finally {
    await own.close();
  }
});
