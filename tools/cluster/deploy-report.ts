/** The tables `npm run cluster-deploy` prints: where each flow ran, and the same summed up by phase and flow. */
import { renderTable } from '../../src/starter/output';

export interface PlacedRow {
  phase: string;
  flow: string;
  workflowId: string;
  /** Builds of its first and last completed workflow task. */
  first: string;
  last: string;
  /** Builds whose workers failed one of its workflow tasks (v3). */
  failedOn: string[];
  ok: boolean;
  outcome: string;
}

/** One line per flow: the builds of its first and last workflow task. */
export function flowTable(rows: PlacedRow[]): string {
  const cells = rows.map((r) => ({
    phase: r.phase,
    flow: `${r.ok ? '✓' : '✗'} ${r.flow}`,
    'workflow ID': r.workflowId.length > 58 ? `${r.workflowId.slice(0, 57)}…` : r.workflowId,
    first: r.first,
    last: r.last,
    'failed on': r.failedOn.join(', '),
    outcome: r.outcome.length > 48 ? `${r.outcome.slice(0, 47)}…` : r.outcome,
  }));
  return renderTable(cells, ['phase', 'flow', 'workflow ID', 'first', 'last', 'failed on', 'outcome'], { rule: true });
}

/** Per phase and flow: how many, how many as asked, and how many ran on each first → last pair of builds. */
export function summaryTable(rows: PlacedRow[]): string {
  const groups = new Map<string, PlacedRow[]>();
  for (const r of rows) groups.set(`${r.phase}\u0000${r.flow}`, [...(groups.get(`${r.phase}\u0000${r.flow}`) ?? []), r]);
  const cells = [...groups.values()].map((g) => ({
    phase: g[0].phase,
    flow: g[0].flow,
    flows: g.length,
    'as asked': g.filter((r) => r.ok).length,
    'first → last build': countBy(g.map((r) => `${r.first} → ${r.last}${r.failedOn.length ? ` (failed on ${r.failedOn.join(', ')})` : ''}`)),
  }));
  return renderTable(cells, ['phase', 'flow', 'flows', 'as asked', 'first → last build'], { alignRight: ['flows', 'as asked'], rule: true });
}

/** "v1 → v1 ×60, v2 → v2 ×3" */
export function countBy(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} ×${n}`).join(', ');
}
