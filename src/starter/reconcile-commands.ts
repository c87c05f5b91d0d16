/**
 * The reconciliation commands of the operator CLI (CONTRACTS §6): `schedules apply|list|pause
 * NAME|resume NAME`, `reconcile [--only …] [--since DURATION]` (exit 0: no difference, 1: some)
 * and `drift` (the last report of each).
 */
import { RECONCILE_KINDS, RECONCILIATIONS, parseDuration, reconcileKindOf, summariseReport, type DriftReport, type ReconcileKind } from '../shared/reconciliation';
import { applySchedules, kindOfScheduleName, listSchedules, pauseSchedule, resumeSchedule } from '../temporal/schedules';
import { UsageError, flag, type Flags } from './args';
import type { Command, CommandContext, CommandOutcome } from './command-kit';
import { renderTable } from './output';
import { latestReports, reconcileNow, startReconciliations } from './reconciliation';

type SchedulesPlan = { action: 'apply' | 'list' } | { action: 'pause' | 'resume'; kind: ReconcileKind; name: string };

const SCHEDULE_NAMES = RECONCILE_KINDS.map((k) => RECONCILIATIONS[k].scheduleId).join(', ');

async function target(ctx: CommandContext) {
  return (await ctx.client()).temporal;
}

const schedules: Command<SchedulesPlan> = {
  usage: 'schedules apply | schedules list | schedules pause NAME | schedules resume NAME',
  description: 'Apply, list, pause or resume the reconciliation schedules (reconcile-money, reconcile-cards, refresh-bins, sweep-stuck).',
  example: 'schedules pause reconcile-money',
  options: {},
  positional: 'ACTION [NAME]',
  positionals: 2,
  parse(_flags, words) {
    const [action, name, ...rest] = (words ?? '').split(' ').filter(Boolean);
    if (action === 'apply' || action === 'list') {
      if (name !== undefined) throw new UsageError(`schedules ${action} takes no NAME (got "${name}")`);
      return { action };
    }
    if (action === 'pause' || action === 'resume') {
      if (!name || rest.length > 0) throw new UsageError(`schedules ${action} needs one NAME: ${SCHEDULE_NAMES}`);
      const kind = kindOfScheduleName(name);
      if (!kind) throw new UsageError(`NAME must be one of ${SCHEDULE_NAMES} (got "${name}")`);
      return { action, kind, name };
    }
    throw new UsageError(`ACTION must be apply, list, pause or resume${action ? ` (got "${action}")` : ''}`);
  },
  async run(plan, ctx) {
    const t = await target(ctx);
    switch (plan.action) {
      case 'apply': {
        const outcomes = await applySchedules(t);
        const rows = Object.entries(outcomes).map(([scheduleId, outcome]) => ({ scheduleId, outcome }));
        return { ok: true, result: { schedules: outcomes }, text: renderTable(rows, ['scheduleId', 'outcome']) };
      }
      case 'list': {
        const list = await listSchedules(t);
        return { ok: true, result: { schedules: list }, text: renderTable(list as unknown as Array<Record<string, unknown>>, ['name', 'every', 'paused', 'nextRunAt', 'lastRunAt', 'lastWorkflowId']) };
      }
      case 'pause':
        await pauseSchedule(t, plan.kind);
        return { ok: true, result: { schedule: plan.name, paused: true } };
      case 'resume':
        await resumeSchedule(t, plan.kind);
        return { ok: true, result: { schedule: plan.name, paused: false } };
    }
  },
};

interface ReconcilePlan {
  kinds: ReconcileKind[];
  since?: string;
}

const reconcile: Command<ReconcilePlan> = {
  starts: true,
  usage: 'reconcile [--only money,cards,bins,stuck] [--since DURATION]',
  description: 'Run reconciliations now and report the differences with the provider (exit 1 when there are some).',
  example: 'reconcile --only money --since 2h',
  options: { only: { type: 'string' }, since: { type: 'string' } },
  parse(flags: Flags) {
    const only = flag(flags, 'only');
    const kinds = only === undefined ? [...RECONCILE_KINDS] : only.split(',').map((w) => w.trim());
    const unknown = kinds.filter((k) => reconcileKindOf(k) === undefined);
    if (unknown.length > 0 || kinds.length === 0) throw new UsageError(`--only must list some of ${RECONCILE_KINDS.join(',')} (got "${only}")`);
    const since = flag(flags, 'since');
    if (since !== undefined && parseDuration(since) === undefined) throw new UsageError(`--since must be a duration such as 2h, 30m, 1d (got "${since}")`);
    return { kinds: [...new Set(kinds)] as ReconcileKind[], since };
  },
  async run(plan, ctx) {
    const input = plan.since ? { since: plan.since } : {};
    if (!ctx.wait) {
      const handles = await startReconciliations(await target(ctx), plan.kinds, input, (id) => ctx.progress(`started ${id}`));
      const workflowIds = handles.map((h) => h.workflowId);
      ctx.progress('not waiting (--no-wait); each report: npm run starter -- drift, once they end');
      return { ok: true, result: { workflowIds, waited: false }, text: workflowIds.join('\n') } satisfies CommandOutcome;
    }
    const reports = await reconcileNow(await target(ctx), plan.kinds, input, (id) => ctx.progress(`started ${id}`));
    const differences = reports.reduce((n, r) => n + r.differences.length, 0);
    const failure = { type: 'DifferencesFound', message: `${differences} difference(s) between our records and the provider's` };
    return { ok: differences === 0, result: { differences, reports }, text: reportsText(reports), ...(differences === 0 ? {} : { failure }) } satisfies CommandOutcome;
  },
};

const drift: Command<null> = {
  usage: 'drift',
  description: 'Show the last report of each reconciliation.',
  example: 'drift',
  options: {},
  parse: () => null,
  async run(_plan, ctx) {
    const latest = await latestReports(await target(ctx), RECONCILE_KINDS);
    const reports = latest.flatMap((l) => (l.report ? [{ ...l.report, workflowId: l.workflowId }] : []));
    const never = latest.filter((l) => !l.report).map((l) => RECONCILIATIONS[l.kind].scheduleId);
    const text = [reportsText(reports), ...never.map((n) => `${n}: no run yet`)].filter(Boolean).join('\n');
    return { ok: true, result: { reports, neverRun: never }, text };
  },
};

/** One summary line per report, then its differences as a table. */
function reportsText(reports: DriftReport[]): string {
  return reports
    .map((r) => {
      const head = `${summariseReport(r)}  [${r.startedAt} → ${r.finishedAt}]`;
      if (r.differences.length === 0) return head;
      const rows = r.differences.map((d) => ({ kind: d.kind, ids: JSON.stringify(d.ids), ours: JSON.stringify(d.ours ?? null), provider: JSON.stringify(d.provider ?? null), workflowId: d.workflowId ?? '' }));
      return `${head}\n${renderTable(rows, ['kind', 'ids', 'ours', 'provider', 'workflowId'], { rule: true })}`;
    })
    .join('\n');
}

export const RECONCILE_COMMANDS: Record<string, Command<any>> = { schedules, reconcile, drift };
