/**
 * What a settlement is (issue 29), pure so workflows, activities and the CLI share it: the flows
 * that ended OutcomeUnknown mark themselves with ProviderStatus = OUTCOME_UNKNOWN, and
 * `settleOutcome` under `settlement/<workflowId>` records what the provider (or the operator)
 * said of each. temporal/settlements.ts reads them back.
 */
import type { FieldErrors } from './failures';

export const SETTLE_WORKFLOW_TYPE = 'settleOutcome';
/** The ProviderStatus a flow sets as it ends OutcomeUnknown (or SubmissionOutcomeUnknown). */
export const OUTCOME_UNKNOWN_STATUS = 'OUTCOME_UNKNOWN';

const SETTLEMENT_PREFIX = 'settlement/';

/** The workflow ID of the settlement of flow `workflowId`: one per flow, whichever of its runs ended unknown. */
export function settlementWorkflowId(workflowId: string): string {
  return `${SETTLEMENT_PREFIX}${workflowId}`;
}

/** The flow a settlement's workflow ID names. */
export function settledWorkflowId(settlementId: string): string {
  return settlementId.startsWith(SETTLEMENT_PREFIX) ? settlementId.slice(SETTLEMENT_PREFIX.length) : settlementId;
}

/** What an operator may say of a flow the provider cannot be asked about. */
export const SETTLEMENT_VERDICTS = ['moved', 'not-moved'] as const;
/** What the provider said of a flow's money, under every key it could have used. */
export type SettlementVerdict = (typeof SETTLEMENT_VERDICTS)[number] | 'processing';

export interface SettleInput {
  /** The flow to settle. */
  workflowId: string;
  /** The operator's finding, for a flow the spec gives no lookup for; checked against the provider where it can be asked. */
  found?: (typeof SETTLEMENT_VERDICTS)[number];
  /** Why, who, the ticket: kept with the settlement. */
  note?: string;
  /** The flow's kind when no claim names it (for the record). */
  flowKind?: string;
}

/** The result of a completed settleOutcome run: the settlement. */
export interface Settlement {
  workflowId: string;
  flowKind: string;
  verdict: (typeof SETTLEMENT_VERDICTS)[number];
  /** Each key, merOrderNo or cardId asked about, and what the provider answered (known: false, no record). */
  asked: Array<{ resource: string; ref: string; known: boolean; status?: string; amount?: number }>;
  settledAt: string;
  /** Whether the provider's answers decided it, or the operator's word (nothing could be asked). */
  by: 'provider' | 'operator';
  note?: string;
}

export const MAX_NOTE_LENGTH = 500;

export function settleInputErrors(input: Partial<SettleInput> | undefined): FieldErrors {
  const errors: FieldErrors = {};
  if (typeof input?.workflowId !== 'string' || input.workflowId.length === 0) errors.workflowId = 'is required';
  if (input?.found !== undefined && !(SETTLEMENT_VERDICTS as readonly unknown[]).includes(input.found)) errors.found = `must be one of ${SETTLEMENT_VERDICTS.join(', ')}`;
  if (input?.note !== undefined && (typeof input.note !== 'string' || input.note.length > MAX_NOTE_LENGTH)) errors.note = `must be text of at most ${MAX_NOTE_LENGTH} characters`;
  if (input?.flowKind !== undefined && typeof input.flowKind !== 'string') errors.flowKind = 'must be a string';
  return errors;
}
