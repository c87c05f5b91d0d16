/**
 * Engine actions per flow, counted from histories the way Temporal Cloud bills them
 * (docs.temporal.io/cloud/actions): a workflow start or continue-as-new, an update, each activity
 * attempt, a timer, a signal taken, a marker, a search-attribute upsert, a child workflow. Heartbeats
 * are billed too but leave no event: our money activities record none. Replays bill nothing.
 */
import type { temporal } from '@temporalio/proto';
import { round } from './lib';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export const ACTION_KINDS = ['workflow start', 'continue-as-new', 'update', 'activity', 'activity retry', 'timer', 'signal', 'marker', 'upsert', 'child workflow'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

export interface ActionCount {
  /** Actions per flow (all kinds). */
  perFlow: number;
  /** Per kind, per flow; kinds with none left out. */
  byKind: Partial<Record<ActionKind, number>>;
}

const ms = (e: HistoryEvent): number => {
  const t = e.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : Number.NaN;
};

/** The action one event bills, if any. */
function kindOf(e: HistoryEvent): ActionKind | undefined {
  if (e.workflowExecutionStartedEventAttributes) return e.workflowExecutionStartedEventAttributes.continuedExecutionRunId ? 'continue-as-new' : 'workflow start';
  if (e.workflowExecutionUpdateAcceptedEventAttributes) return 'update';
  if (e.activityTaskScheduledEventAttributes) return 'activity';
  if (e.activityTaskStartedEventAttributes && (e.activityTaskStartedEventAttributes.attempt ?? 1) > 1) return 'activity retry';
  if (e.timerStartedEventAttributes) return 'timer';
  if (e.workflowExecutionSignaledEventAttributes) return 'signal';
  if (e.markerRecordedEventAttributes) return 'marker';
  if (e.upsertWorkflowSearchAttributesEventAttributes || e.workflowPropertiesModifiedEventAttributes) return 'upsert';
  if (e.startChildWorkflowExecutionInitiatedEventAttributes) return 'child workflow';
  return undefined;
}

/** The actions of `histories`, per flow of `flows`; only events from `from` to `to` (epoch ms) when given. */
export function actionsOf(histories: HistoryEvent[][], flows: number, from = -Infinity, to = Infinity): ActionCount {
  const counts = new Map<ActionKind, number>();
  for (const history of histories) {
    for (const e of history) {
      const t = ms(e);
      if (t < from || t > to) continue;
      const kind = kindOf(e);
      if (kind) counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
  }
  const n = Math.max(1, flows);
  const byKind: ActionCount['byKind'] = {};
  for (const kind of ACTION_KINDS) if (counts.has(kind)) byKind[kind] = round(counts.get(kind)! / n, 2);
  return { perFlow: round([...counts.values()].reduce((s, c) => s + c, 0) / n, 2), byKind };
}

/** `ours` beside `bare`: the actions above the baseline, named by kind. */
export function actionsAbove(ours: ActionCount, bare: ActionCount): { extra: number; byKind: Partial<Record<ActionKind, number>> } {
  const byKind: Partial<Record<ActionKind, number>> = {};
  for (const kind of ACTION_KINDS) {
    const d = round((ours.byKind[kind] ?? 0) - (bare.byKind[kind] ?? 0), 2);
    if (d !== 0) byKind[kind] = d;
  }
  return { extra: round(ours.perFlow - bare.perFlow, 2), byKind };
}

/** `4.02 (update 1, activity 2, …)` for the table. */
export function describeActions(a: ActionCount): string {
  const kinds = Object.entries(a.byKind).map(([k, v]) => `${k} ${v}`).join(', ');
  return `${a.perFlow}${kinds ? ` (${kinds})` : ''}`;
}

/** `+1.02: activity 1, upsert 0.02` for the table. */
export function describeAbove(above: { extra: number; byKind: Partial<Record<ActionKind, number>> }): string {
  const kinds = Object.entries(above.byKind).map(([k, v]) => `${k} ${v > 0 ? '+' : ''}${v}`).join(', ');
  return `${above.extra > 0 ? '+' : ''}${above.extra}${kinds ? `: ${kinds}` : ''}`;
}
