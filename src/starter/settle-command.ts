/**
 * `settle WORKFLOW_ID|KEY [--found moved|not-moved] [--note TEXT]` (issue 29): settles a flow that
 * ended OutcomeUnknown. The settleOutcome workflow (under `settlement/<workflowId>`) asks the
 * provider under every key the flow could have used and records what it found; this prints it.
 * Exit 0: settled (moved or not moved), or settled before; 1: still processing at the provider, or
 * `--found` contradicts it (nothing recorded); 2: no such flow, or bad flags.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { SETTLE_WORKFLOW_TYPE, settleInputErrors, settlementWorkflowId, type SettleInput, type Settlement } from '../shared/settlement';
import { unsettledOutcomes } from '../temporal/settlements';
import { UsageError, assertNoErrors, flag, type Flags } from './args';
import { leftRunning, type Command, type CommandOutcome } from './command-kit';
import { renderTable } from './output';
import { isCardIssuingError, toCardIssuingError } from '../client';

interface SettlePlan {
  /** A workflow ID, or the idempotency key of a flow that ended OutcomeUnknown. */
  ref: string;
  found?: SettleInput['found'];
  note?: string;
}

export const settle: Command<SettlePlan> = {
  starts: true,
  usage: 'settle WORKFLOW_ID|KEY [--found moved|not-moved] [--note TEXT]',
  options: { found: { type: 'string' }, note: { type: 'string' } },
  positional: 'WORKFLOW_ID|KEY',
  parse(flags: Flags, positional: string | undefined) {
    if (!positional) throw new UsageError('WORKFLOW_ID|KEY is required: the workflow ID of the flow to settle, or its idempotency key');
    const found = flag(flags, 'found') as SettleInput['found'];
    const note = flag(flags, 'note');
    assertNoErrors(settleInputErrors({ workflowId: positional, found, note }), { workflowId: 'WORKFLOW_ID|KEY', found: '--found', note: '--note' });
    return { ref: positional, ...(found === undefined ? {} : { found }), ...(note === undefined ? {} : { note }) };
  },
  async run(plan, ctx) {
    const { client, taskQueue } = (await ctx.client()).temporal;
    const workflowId = await flowNamed(client, taskQueue, plan.ref);
    ctx.following(settlementWorkflowId(workflowId));
    const input = { workflowId, ...(plan.found ? { found: plan.found } : {}), ...(plan.note ? { note: plan.note } : {}) };
    if (!ctx.wait) {
      const { handle, before } = await startSettlement(client, taskQueue, input);
      ctx.progress(before ? `${workflowId} was settled before` : `started ${handle.workflowId}`);
      return leftRunning(ctx, handle.workflowId, { workflowId: handle.workflowId, settledBefore: before }, `the settlement: npm run starter -- status ${handle.workflowId}`);
    }
    const { settlement, before } = await settleFlow(client, taskQueue, input);
    return { ok: true, workflowId: settlementWorkflowId(workflowId), result: { ...settlement, settledBefore: before }, text: settlementText(settlement, before) } satisfies CommandOutcome;
  },
};

/**
 * The flow `ref` names: a workflow ID when one exists; else the one unsettled OutcomeUnknown flow
 * whose caller's key it is (the last part of its workflow ID) or whose failure names it as its key.
 */
async function flowNamed(client: Client, taskQueue: string, ref: string): Promise<string> {
  if (await exists(client, ref)) return ref;
  const unsettled = await unsettledOutcomes(client, taskQueue);
  const keyed = await Promise.all(unsettled.map(async (flow) => flow.workflowId.endsWith(`/${ref}`) || (await failureKey(client, flow)) === ref));
  const matches = unsettled.filter((_, i) => keyed[i]).map((f) => f.workflowId);
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) throw new UsageError(`key "${ref}" names several unsettled flows (${matches.join(', ')}): settle each by its workflow ID`);
  throw new UsageError(`no flow has the workflow ID "${ref}", and no unsettled OutcomeUnknown flow on ${taskQueue} has it as its key`);
}

async function exists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** The idempotency key an OutcomeUnknown failure names in its details. */
async function failureKey(client: Client, flow: { workflowId: string; runId: string }): Promise<string | undefined> {
  const failure = await client.workflow
    .getHandle(flow.workflowId, flow.runId)
    .result()
    .then(() => undefined, (err: unknown) => toCardIssuingError(err));
  if (!isCardIssuingError(failure)) return undefined;
  const withKey = failure.details.find((d): d is { idempotencyKey: string } => typeof (d as { idempotencyKey?: unknown } | null)?.idempotencyKey === 'string');
  return withKey?.idempotencyKey;
}

/** Runs the settlement (or joins one running); a flow settled before answers with that settlement. */
export async function settleFlow(client: Client, taskQueue: string, input: SettleInput): Promise<{ settlement: Settlement; before: boolean }> {
  const { handle, before } = await startSettlement(client, taskQueue, input);
  try {
    return { settlement: (await handle.result()) as Settlement, before };
  } catch (err) {
    throw toCardIssuingError(err, { workflowId: handle.workflowId });
  }
}

/** Starts the settlement (or joins one running); `before`: the flow was settled before, and the handle is that settlement's. */
async function startSettlement(client: Client, taskQueue: string, input: SettleInput): Promise<{ handle: WorkflowHandle; before: boolean }> {
  const workflowId = settlementWorkflowId(input.workflowId);
  try {
    const handle = await client.workflow.start(SETTLE_WORKFLOW_TYPE, {
      taskQueue,
      workflowId,
      args: [input],
      // A settlement that failed (still processing) may be tried again; a completed one stands.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    return { handle, before: false };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw toCardIssuingError(err, { workflowId });
    return { handle: client.workflow.getHandle(workflowId), before: true };
  }
}

function settlementText(s: Settlement, before: boolean): string {
  const head = `${s.workflowId} (${s.flowKind}): ${s.verdict === 'moved' ? 'MOVED' : 'NOT MOVED'}, by ${s.by === 'provider' ? "the provider's answers" : "the operator's word"}${before ? `, settled before (${s.settledAt})` : ''}`;
  const rows = s.asked.map((a) => ({ resource: a.resource, ref: a.ref, provider: a.known ? a.status : 'no record', amount: a.amount ?? '' }));
  return [head, ...(rows.length > 0 ? [renderTable(rows, ['resource', 'ref', 'provider', 'amount'], { rule: true })] : []), ...(s.note ? [`note: ${s.note}`] : [])].join('\n');
}
