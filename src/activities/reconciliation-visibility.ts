/**
 * Reconciliation's Temporal-side reads and corrections: one page of visibility at a time (the
 * workflow carries the page token across continue-as-new), what each money flow said it did
 * (its result or failure), each card workflow's view, where a running flow waits, and the
 * correction of a card workflow's cached card. No provider budget is spent here.
 */
import { Context } from '@temporalio/activity';
import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { executionInfoFromRaw } from '@temporalio/client/lib/helpers';
import { addressed } from '../shared/signal-origin';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { cardMovementsQuery, cardReadSignal, cardStateQuery } from '../shared/messages';
import type { CardView } from '../shared/types';
import { describeFlow, flowSearchAttributes, type FlowStatus } from '../temporal/flow-status';
import { definedOnly } from '../shared/defined-only';
import { moneyClaimOf, type FlowAsked, type FlowOutcome, type MoneyClaim } from '../shared/reconcile-checks';
import { isSettled } from '../temporal/settlements';
import { endedItems, recordOf, reopenEndedItem, startOpenItem } from '../temporal/open-items';
import { lookupOfClaim, openItemId, unaccountedItemOf, type OpenItem, type OpenItemOwner, type UnaccountedState } from '../shared/open-items';
import { lastRunStart } from '../temporal/reconciliation-runs';
import { mainQueueOf } from '../shared/entity-queues';
import { latestReport } from '../temporal/reconciliation-reports';

/** How a run closed when it said nothing: its item is opened by the reconciliation that first sees it. */
const CLOSED_WITHOUT_A_WORD = ['TERMINATED', 'TIMED_OUT', 'CANCELLED', 'CANCELED'];

/** The open item of a claim whose run closed without a word. */
function itemOfClaim(claim: MoneyClaim, owner: OpenItemOwner): OpenItem {
  return {
    owner,
    flowKind: claim.flowKind,
    lookup: lookupOfClaim(claim),
    ...(claim.resource === 'operation' ? { idempotencyKey: claim.ref } : {}),
    ...(claim.cardId ? { cardId: claim.cardId } : {}),
    ...(claim.amount === undefined ? {} : { amount: claim.amount }),
    reason: claim.ourStatus,
    lastSaid: 'UNKNOWN',
    openedAt: Date.now(),
  };
}

export interface FlowRow {
  workflowId: string;
  runId: string;
  type: string;
  /** RUNNING, COMPLETED, FAILED, … */
  status: string;
  searchAttributes: FlowStatus['searchAttributes'];
  startTime: number;
  closeTime?: number;
}

export interface Page<T> {
  items: T[];
  /** base64; null when this was the last page. */
  nextPageToken: string | null;
}

export interface PageRequest {
  query: string;
  pageToken?: string;
  pageSize: number;
}

export interface CardWorkflowView {
  cardId: string;
  workflowId: string;
  status?: string;
  availableBalance?: number;
  /** A movement of ours happened after the view's last read: its balance is stale, not drifted. */
  movedSinceBalanceRead?: boolean;
}

export function createReconciliationVisibilityActivities({ temporal }: { temporal: Client }) {
  const isRunning = async (workflowId: string): Promise<boolean> =>
    (await temporal.workflow
      .getHandle(workflowId)
      .describe()
      .then((i) => i.status.name, (err: unknown) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err)))) === 'RUNNING';
  const listPage = async ({ query, pageToken, pageSize }: PageRequest): Promise<Page<FlowRow>> => {
    const answer = await temporal.workflowService.listWorkflowExecutions({
      namespace: temporal.options.namespace,
      query,
      pageSize,
      nextPageToken: pageToken ? Buffer.from(pageToken, 'base64') : undefined,
    });
    const items = await Promise.all(
      (answer.executions ?? []).map(async (raw) => {
        const info = await executionInfoFromRaw(raw, temporal.workflow.options.loadedDataConverter, raw, temporal.options.namespace);
        const { workflowId, runId, type, status, startTime, closeTime } = info;
        const row: FlowRow = { workflowId, runId, type, status: status.name, searchAttributes: flowSearchAttributes(info.typedSearchAttributes), startTime: startTime.getTime() };
        return closeTime ? { ...row, closeTime: closeTime.getTime() } : row;
      }),
    );
    const next = answer.nextPageToken && answer.nextPageToken.length > 0 ? Buffer.from(answer.nextPageToken).toString('base64') : null;
    return { items, nextPageToken: next };
  };

  /**
   * What a flow was asked (its caller's key, amount and merOrderNo, from its start input decoded
   * through our codec) and the card it recorded (its CardId search attribute).
   */
  const askedBy = async (row: FlowRow): Promise<FlowAsked> => {
    // The first event alone (a page of one): a running flow's history may hold many polls.
    const page = await temporal.workflowService.getWorkflowExecutionHistory({
      namespace: temporal.options.namespace,
      execution: { workflowId: row.workflowId, runId: row.runId },
      maximumPageSize: 1,
    });
    const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
    const input = await decodeFromPayloadsAtIndex<Record<string, unknown> | undefined>(temporal.workflow.options.loadedDataConverter, 0, started?.input?.payloads);
    const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
    return definedOnly({ callerKey: text(input?.idempotencyKey), amount: typeof input?.amount === 'number' ? input.amount : undefined, merOrderNo: text(input?.merOrderNo), cardId: row.searchAttributes.CardId });
  };

  /**
   * What a flow said: its result, or its failure's type and details (decoded through our codec);
   * a flow that did not complete (failed, closed without a word, or still running) also brings
   * what it was asked, for the keys and ids its outcome does not name.
   */
  const outcomeOf = async (row: FlowRow): Promise<FlowOutcome> => {
    if (row.status === 'RUNNING') return { running: true, ...(await askedBy(row)) };
    if (row.status !== 'COMPLETED' && row.status !== 'FAILED') return { closed: row.status, ...(await askedBy(row)) };
    try {
      return { result: await temporal.workflow.getHandle(row.workflowId, row.runId).result() };
    } catch (err) {
      const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
      const failure = cause instanceof ApplicationFailure ? { type: cause.type ?? 'ApplicationFailure', details: [...(cause.details ?? [])] } : { type: cause?.name ?? 'Failure', details: [] };
      return { failure, ...(await askedBy(row)) };
    }
  };

  /** The workflow IDs among `claims` that an operator settled before open items (`settleOutcome`): reconciliation no longer reports them. */
  const settledAmong = async (claims: MoneyClaim[]): Promise<Set<string>> => {
    const ended = [...new Set(claims.filter((c) => c.ourPhase === 'failed').map((c) => c.workflowId))];
    const settled = await Promise.all(ended.map((id) => isSettled(temporal, id)));
    return new Set(ended.filter((_, i) => settled[i]));
  };

  /**
   * docs/idempotency.md "Open items": a claim whose run or update did not say what moved is an open
   * item. One closed without a word (terminated, timed out, cancelled by an older build) is opened
   * here, the first time a run sees it; one whose item has closed is compared by its item's record,
   * our word for it now (a record that says moved, against a provider that agrees, is no difference).
   */
  const throughItems = async (claims: MoneyClaim[], taskQueue: string): Promise<MoneyClaim[]> =>
    Promise.all(
      claims.map(async (claim) => {
        if (claim.ourPhase !== 'failed' || (claim.runId === undefined && claim.updateId === undefined)) return claim;
        const owner = { workflowId: claim.workflowId, ...(claim.updateId !== undefined ? { updateId: claim.updateId } : { runId: claim.runId }) };
        const record = await recordOf(temporal, owner);
        if (record) return { ...claim, ourPhase: record.verdict === 'moved' ? 'succeeded' : 'failed', ourStatus: `settled ${record.verdict}` } satisfies MoneyClaim;
        if (CLOSED_WITHOUT_A_WORD.includes(claim.ourStatus)) await startOpenItem(temporal, taskQueue, itemOfClaim(claim, owner));
        return claim;
      }),
    );

  /** A card workflow's money updates settled since `sinceMs`, as claims (a failure whose details name no key is looked up by its caller's). */
  const cardMovementClaims = async (workflowId: string, sinceMs: number): Promise<Array<MoneyClaim | undefined>> => {
    const movements = await temporal.workflow.getHandle(workflowId).query(cardMovementsQuery);
    return movements
      .filter((m) => m.at !== undefined && m.at >= sinceMs && m.request !== undefined)
      .map((m) => {
        const flowKind = m.request?.kind === 'withdrawal' ? 'withdrawFromCard' : 'fundCard';
        const callerKey = m.request?.idempotencyKey;
        const outcome: FlowOutcome = 'result' in m ? { result: m.result } : { failure: { type: m.failure.type ?? 'ApplicationFailure', details: m.failure.details }, ...(callerKey ? { callerKey } : {}) };
        // A keyless update derived its key from its update ID (card-lifecycle.ts, marker money-keys-from-update-id).
        const claim = moneyClaimOf(workflowId, flowKind, outcome, `${workflowId}/${m.request?.kind}/update/${m.updateId}`);
        return claim && { ...claim, amount: claim.amount ?? m.request?.amount, updateId: m.updateId };
      });
  };

  return {
    /**
     * One page of money flows, each with what it said it did (only those that reached the provider);
     * a card workflow listed there brings each money update it settled since `sinceMs`.
     */
    async moneyClaimsPage(req: PageRequest & { sinceMs?: number }): Promise<Page<MoneyClaim> & { listed: number }> {
      const page = await listPage(req);
      const claims = await Promise.all(
        page.items.map(async (row): Promise<Array<MoneyClaim | undefined>> => {
          if (row.type === 'cardLifecycle') return cardMovementClaims(row.workflowId, req.sinceMs ?? 0);
          const flowKind = row.searchAttributes.FlowKind ?? row.type;
          const claim = moneyClaimOf(row.workflowId, flowKind, await outcomeOf(row));
          return [claim && { ...claim, runId: row.runId }];
        }),
      );
      const items = claims.flat().filter((c): c is MoneyClaim => c !== undefined);
      const settled = await settledAmong(items);
      const kept = await throughItems(items.filter((c) => !settled.has(c.workflowId)), mainQueueOf(Context.current().info.taskQueue));
      return { items: kept, nextPageToken: page.nextPageToken, listed: page.items.length };
    },

    /**
     * Items cannot vanish (issue 51): every item on the main queue whose latest run was terminated,
     * cancelled, timed out or failed is started again under its ID with the same item. How many it reopened.
     */
    async reopenEndedItems(): Promise<number> {
      const taskQueue = mainQueueOf(Context.current().info.taskQueue);
      const ended = await endedItems(temporal, taskQueue);
      const reopened = await Promise.all(ended.map((row) => reopenEndedItem(temporal, taskQueue, row.itemId)));
      const count = reopened.filter(Boolean).length;
      if (count > 0) Context.current().log.warn('reopened open items that ended without a record', { reopened: ended.filter((_, i) => reopened[i]).map((r) => `${r.itemId} (${r.ended})`) });
      return count;
    },

    /**
     * Every `moved-unaccounted` becomes an item (issue 51): money the provider moved that no record of
     * ours accounts for is an open item under an ID derived from the claim's owner and the provider's
     * reference, so a later run finds the same item, and it pages until an operator settles it. A claim
     * whose own item (or attempt) still runs is left to it: that item closes by the provider's word.
     * Per claim: its item's state, and its record once settled.
     */
    async openUnaccountedItems({ claims }: { claims: Array<{ claim: MoneyClaim; providerSaid: string }> }): Promise<UnaccountedState[]> {
      const taskQueue = mainQueueOf(Context.current().info.taskQueue);
      return Promise.all(
        claims.map(async ({ claim, providerSaid }): Promise<UnaccountedState> => {
          const own = claim.updateId !== undefined ? { workflowId: claim.workflowId, updateId: claim.updateId } : claim.runId !== undefined ? { workflowId: claim.workflowId, runId: claim.runId } : undefined;
          if (own && (await isRunning(openItemId(own)))) return { itemId: openItemId(own), state: 'held-by-its-item' };
          const item = unaccountedItemOf(claim, providerSaid, Date.now());
          const record = await recordOf(temporal, item.owner);
          if (record) return { itemId: record.itemId, state: 'settled', verdict: record.verdict };
          return { itemId: await startOpenItem(temporal, taskQueue, item), state: 'open' };
        }),
      );
    },

    /** The start (epoch ms) of the last completed run of the reconciliation that was not told how far back to look; undefined when none. */
    async lastReconcileRunStart({ kind }: { kind: 'money' }): Promise<number | undefined> {
      return lastRunStart(temporal, mainQueueOf(Context.current().info.taskQueue), kind);
    },

    /** One page of running card workflows, each with its own view of the card (its cardState query). */
    async cardViewsPage(req: PageRequest): Promise<Page<CardWorkflowView>> {
      const page = await listPage(req);
      const items = await Promise.all(
        page.items.map(async (row) => {
          const state = await temporal.workflow.getHandle(row.workflowId).query(cardStateQuery);
          const stale = state.movedSinceBalanceRead ? { movedSinceBalanceRead: true } : {};
          return { cardId: state.cardId, workflowId: row.workflowId, status: state.status, availableBalance: state.card?.availableBalance, ...stale };
        }),
      );
      return { items, nextPageToken: page.nextPageToken };
    },

    /** The BIN ids the last completed refresh-bins run on the task queue reported; null when none did. */
    async lastReportedBins({ taskQueue }: { taskQueue: string }): Promise<string[] | null> {
      const bins = (await latestReport(temporal, taskQueue, 'bins'))?.report.bins;
      return Array.isArray(bins) ? bins : null;
    },

    /** One page of flows, as visibility lists them. */
    flowsPage: listPage,

    /** Where each flow waits: the activities it has pending (their type, state and attempt). */
    async whereFlowsWait({ flows }: { flows: Array<{ workflowId: string; runId: string }> }): Promise<string[][]> {
      return Promise.all(
        flows.map(async ({ workflowId, runId }) => {
          const described = await describeFlow(temporal.workflow.getHandle(workflowId, runId));
          return described.pendingActivities.map((a) => `${a.activityType} (${a.state}, attempt ${a.attempt})`);
        }),
      );
    },

    /** Gives each card workflow the provider's card as reconciliation read it: its view is corrected, never the provider's. */
    async correctCardViews({ corrections }: { corrections: Array<{ workflowId: string; card: CardView; readAt: number }> }): Promise<number> {
      await Promise.all(corrections.map(({ workflowId, card, readAt }) => temporal.workflow.getHandle(workflowId).signal(cardReadSignal, addressed(workflowId, { card, readAt }))));
      return corrections.length;
    },
  };
}
