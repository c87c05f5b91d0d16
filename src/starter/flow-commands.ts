/**
 * Any flow's commands of the operator CLI (CONTRACTS §6): `status WORKFLOW_ID` (where it stands,
 * and who stopped it, why), `flows --card ID [--open]` (a card's flows, by the CardId search
 * attribute), `operation KEY` (the provider's record of an idempotency key, read through a worker),
 * and `cancel WORKFLOW_ID --reason R` / `terminate WORKFLOW_ID --reason R`.
 *
 * A stop's reason is recorded by Temporal in the flow's history: terminate's as the
 * WorkflowExecutionTerminated event's `reason`, cancel's as the WorkflowExecutionCancelRequested
 * event's `cause` (the request's `reason`), each with the CLI's identity (pid@host). Both are plain
 * text, not payloads: the codec does not encrypt them, so a reason names a ticket, never personal
 * data. `status` shows them (`stopped`), as does the Temporal UI's event history.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import { keyErrors } from '../shared/card-rules';
import { entityQueue } from '../shared/entity-queues';
import { literal } from '../shared/reconciliation';
import { OPEN_ITEM_WORKFLOW_TYPE } from '../shared/open-items';
import { UsageError, assertNoErrors, flag } from './args';
import { bool, cardIdArg, str, type Command } from './command-kit';
import { renderFields, renderTable } from './output';

/** The most flows `flows` lists; a card with more says so (`truncated`). */
const MAX_FLOWS = 200;
/** A stop's reason: a line an operator writes (a ticket, a why), kept in the history as plain text. */
const MAX_REASON = 300;

/** Who stopped a flow, how and why, as its history records it. */
export interface StopRecord {
  action: 'cancel' | 'terminate';
  reason: string;
  identity?: string;
  at?: string;
}

const status: Command<string> = {
  usage: 'status WORKFLOW_ID',
  description: 'Show where a flow stands: its status, what it waits on, and who stopped it and why.',
  example: 'status card/$CARD_ID',
  options: {},
  positional: 'WORKFLOW_ID',
  parse(_flags, id) {
    if (!id) throw new UsageError('WORKFLOW_ID is required');
    return id;
  },
  async run(workflowId, ctx) {
    const client = await ctx.client();
    const flow = await client.status(workflowId);
    const stopped = ['CANCELLED', 'TERMINATED'].includes(flow.status) ? await stopOf(client.temporal.client, workflowId, flow.runId) : undefined;
    return { ok: true, workflowId, result: { ...flow, ...(stopped ? { stopped } : {}) } };
  },
};

const flows: Command<{ cardId: string; open: boolean }> = {
  usage: 'flows --card ID [--open]',
  description: 'List a card\'s flows, newest first, found by the CardId search attribute (--open: the running ones).',
  example: 'flows --card $CARD_ID --open',
  options: { card: str, open: bool },
  parse: (flags) => ({ cardId: cardIdArg(flag(flags, 'card', true), '--card'), open: flags.open === true }),
  async run({ cardId, open }, ctx) {
    const { client, taskQueue } = (await ctx.client()).temporal;
    // This deployment's queues only (the main one and the entity workflows'): another deployment's cards are not ours.
    const query = [`CardId = ${literal(cardId)}`, `(TaskQueue = ${literal(taskQueue)} OR TaskQueue = ${literal(entityQueue(taskQueue))})`, ...(open ? [`ExecutionStatus = 'Running'`] : [])].join(' AND ');
    const rows: Array<{ workflowId: string; runId: string; type: string; status: string; startTime: string; closeTime?: string }> = [];
    let truncated = false;
    for await (const run of client.workflow.list({ query, pageSize: 100 })) {
      if (rows.length === MAX_FLOWS) {
        truncated = true;
        break;
      }
      rows.push({ workflowId: run.workflowId, runId: run.runId, type: run.type, status: run.status.name, startTime: run.startTime.toISOString(), ...(run.closeTime ? { closeTime: run.closeTime.toISOString() } : {}) });
    }
    rows.sort((a, b) => b.startTime.localeCompare(a.startTime));
    const none = `no ${open ? 'open ' : ''}flows of card ${cardId} on ${taskQueue} (visibility lags its flows by a moment)`;
    const text = rows.length === 0 ? none : [renderTable(rows, ['workflowId', 'type', 'status', 'startTime', 'closeTime']), ...(truncated ? [`(${MAX_FLOWS} shown, not all: --open lists the running ones)`] : [])].join('\n');
    return { ok: true, result: { cardId, open, flows: rows, ...(truncated ? { truncated } : {}) }, text };
  },
};

/** Read through a worker (the `operationRecord` workflow): the CLI holds no provider secret. A key the provider does not know is an answer (exit 0, `known: false`). */
const operation: Command<string> = {
  usage: 'operation KEY',
  description: 'Show the provider\'s record of an idempotency key (GET /operations/{key}), read through a worker.',
  example: 'operation order-1001',
  options: {},
  positional: 'KEY',
  parse(_flags, key) {
    if (!key) throw new UsageError('KEY is required: the idempotency key of a funding, withdrawal or eSIM purchase');
    assertNoErrors(keyErrors(key), { idempotencyKey: 'KEY' });
    return key;
  },
  async run(key, ctx) {
    ctx.progress(`asking the provider for its record of ${key} (GET /operations/{key}) through a worker`);
    const answer = await (await ctx.client()).operation(key);
    return { ok: true, result: answer, text: answer.known ? renderFields({ idempotencyKey: key, ...answer.record }) : `the provider has no record of key ${key}` };
  },
};

interface StopPlan {
  workflowId: string;
  reason: string;
  force: boolean;
}

/** Flows that stop only with --force, and what stopping each loses (CONTRACTS §6). */
const WHAT_IS_LOST: Readonly<Record<string, string>> = {
  // Live as long as their entity.
  cardLifecycle: "it is the long-lived workflow of its card; stopping it drops its state (the card's view and remembered updates): freeze or delete the card instead",
  providerEntity: 'it is the long-lived workflow of its entity; stopping it drops its state (the events it applied, its subscribers)',
  // Money that may have moved, held until the provider's word or a person's (issue 51, case 4).
  [OPEN_ITEM_WORKFLOW_TYPE]: "it is an open item: money that may have moved, held until the provider's final word or a settlement; stopped, it ends with no record of what moved (still listed by open and paged, until the next reconcile-money run or a settlement reopens it): settle it instead (settle REF [--found moved|not-moved] --note T)",
};

function stopCommand(action: 'cancel' | 'terminate'): Command<StopPlan> {
  const effect = action === 'cancel' ? 'asks the flow to stop (it ends FlowCancelled once it handles the request)' : 'ends the flow at once, running no more of its code';
  return {
    usage: `${action} WORKFLOW_ID --reason R [--force]`,
    description: action === 'cancel'
      ? "Ask a flow to stop, the reason kept in its history; an entity's own workflow or an open item only with --force."
      : "End a flow at once, running no more of its code, the reason kept in its history; an entity's own workflow or an open item only with --force.",
    example: `${action} issue-card/order-1001 --reason "OPS-42: wrong BIN"`,
    options: { reason: str, force: bool },
    positional: 'WORKFLOW_ID',
    parse(flags, workflowId) {
      if (!workflowId) throw new UsageError(`WORKFLOW_ID is required: the flow to ${action}`);
      const reason = flag(flags, 'reason', true).trim();
      if (reason.length === 0 || reason.length > MAX_REASON) throw new UsageError(`--reason must be 1-${MAX_REASON} characters (it is kept in the flow's history as plain text: a ticket, a why, no personal data)`);
      return { workflowId, reason, force: flags.force === true };
    },
    async run(plan, ctx) {
      const { client } = (await ctx.client()).temporal;
      const before = await client.workflow.getHandle(plan.workflowId).describe();
      if (before.status.name !== 'RUNNING') throw new UsageError(`${plan.workflowId} is not running (${before.status.name}): there is nothing to ${action}`);
      const lost = WHAT_IS_LOST[before.type];
      if (lost && !plan.force) throw new UsageError(`${plan.workflowId} (${before.type}) is not stopped: ${lost}; or repeat with --force`);
      if (lost) ctx.progress(`--force: ${lost.split(';')[0]}; ${action === 'terminate' ? 'terminated' : 'cancelled'} all the same`);
      ctx.progress(`${action} ${plan.workflowId} (${before.type}, run ${before.runId}): ${effect}; reason recorded in its history`);
      await (action === 'terminate' ? client.workflow.getHandle(plan.workflowId, before.runId).terminate(plan.reason) : requestCancel(client, before, plan.reason));
      const after = await client.workflow.getHandle(plan.workflowId, before.runId).describe();
      const result = { workflowId: plan.workflowId, runId: before.runId, type: before.type, action, reason: plan.reason, status: after.status.name };
      return { ok: true, workflowId: plan.workflowId, result, text: renderFields(result) };
    },
  };
}

/** Temporal's cancel request with its reason (the SDK's handle.cancel() sends none): recorded as the CancelRequested event's cause. */
async function requestCancel(client: Client, run: WorkflowExecutionDescription, reason: string): Promise<void> {
  try {
    await client.workflowService.requestCancelWorkflowExecution({
      namespace: client.options.namespace,
      workflowExecution: { workflowId: run.workflowId, runId: run.runId },
      identity: client.options.identity,
      requestId: randomUUID(),
      reason,
    });
  } catch (err) {
    // The run closed between describe and the request.
    if ((err as { code?: number }).code === 5) throw new WorkflowNotFoundError(`${run.workflowId} closed before it could be cancelled`, run.workflowId, run.runId);
    throw err;
  }
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The stop of a cancelled or terminated run, newest event first (the stop is near the end). */
async function stopOf(client: Client, workflowId: string, runId: string): Promise<StopRecord | undefined> {
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistoryReverse({ namespace: client.options.namespace, execution: { workflowId, runId }, maximumPageSize: 100, nextPageToken });
    for (const event of page.history?.events ?? []) {
      const stop = stopIn(event);
      if (stop) return stop;
    }
    nextPageToken = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return undefined;
}

function stopIn(event: HistoryEvent): StopRecord | undefined {
  const at = optionalTsToDate(event.eventTime)?.toISOString();
  const terminated = event.workflowExecutionTerminatedEventAttributes;
  if (terminated) return { action: 'terminate', reason: terminated.reason ?? '', ...(terminated.identity ? { identity: terminated.identity } : {}), ...(at ? { at } : {}) };
  const cancel = event.workflowExecutionCancelRequestedEventAttributes;
  if (cancel) return { action: 'cancel', reason: cancel.cause ?? '', ...(cancel.identity ? { identity: cancel.identity } : {}), ...(at ? { at } : {}) };
  return undefined;
}

export const FLOW_COMMANDS: Record<string, Command<any>> = {
  status,
  flows,
  operation,
  cancel: stopCommand('cancel'),
  terminate: stopCommand('terminate'),
};
