/**
 * The open item of a flow run or card update, from what it knows when it ends without an answer:
 * its input (the caller's key, amount, merOrderNo, card), its failure's details (the key it used,
 * the order or card the provider named, what the provider last said) and its workflow ID (the keys
 * a keyless run derived). One builder, so every opener describes its item the same way.
 */
import { workflowInfo } from '@temporalio/workflow';
import { lookupOf, type OpenItem } from '../../shared/open-items';
import { fieldIn } from '../../shared/reconcile-checks';
import { CARD_ID } from '../../shared/search-attributes';
import type { WaitTimings } from '../../shared/types';

export interface ItemSource {
  flowKind: string;
  owner: OpenItem['owner'];
  /** The start input, or a card update's arguments. */
  input: Record<string, unknown> | undefined;
  /** The failure's details, or none (a cancellation). */
  details: readonly unknown[];
  reason: string;
  /** What a keyless call derived its key from (the workflow ID; a card update's scope). */
  keyScope: string;
}

export function itemOf({ flowKind, owner, input, details, reason, keyScope }: ItemSource): Omit<OpenItem, 'openedAt'> {
  const text = (field: string) => fieldIn(details, field) ?? (typeof input?.[field] === 'string' && input[field] ? (input[field] as string) : undefined);
  const cardId = text('cardId') ?? workflowInfo().typedSearchAttributes.get(CARD_ID);
  const lookup = lookupOf(flowKind, { idempotencyKey: text('idempotencyKey'), merOrderNo: text('merOrderNo'), orderNo: fieldIn(details, 'orderNo'), cardId, keyScope });
  const amount = numberIn(details, 'amount') ?? numberOf(input?.amount) ?? numberOf(input?.initialAmount);
  const timings = input?.timings as WaitTimings | undefined;
  return {
    owner,
    flowKind,
    ...(lookup ? { lookup } : {}),
    ...(lookup?.resource === 'operation' ? { idempotencyKey: lookup.ref } : text('idempotencyKey') ? { idempotencyKey: text('idempotencyKey') } : {}),
    ...(cardId ? { cardId } : {}),
    ...(amount === undefined ? {} : { amount }),
    reason,
    lastSaid: (fieldIn(details, 'lastStatus') ?? 'UNKNOWN').slice(0, 64),
    ...cadenceOf(timings),
  };
}

/** A caller that set its own polling (tests, impatient callers) has its item asked at that pace (the opener holds it to the workers' floor). */
export function cadenceOf(timings: WaitTimings | undefined): Pick<OpenItem, 'cadence'> {
  return timings?.pollMaxIntervalMs ? { cadence: { firstAskMs: timings.pollMaxIntervalMs, maxAskIntervalMs: timings.pollMaxIntervalMs * 16 } } : {};
}

function numberIn(details: readonly unknown[], field: string): number | undefined {
  for (const d of details) {
    const value = numberOf((d as Record<string, unknown> | null)?.[field]);
    if (value !== undefined) return value;
  }
  return undefined;
}

function numberOf(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}
