/** The end of `npm run cluster-deploy`: where every flow ran, every flow as asked, the ledger exact, the verdict. */
import { rmSync } from 'node:fs';
import { entityWorkflowId } from '../../src/shared/ids';
import { deliverySummary } from './cluster';
import { buildOfPid, elapsed, historiesOf, placements, say, type Rollout } from './deploy-context';
import { first, last, placementOf } from './deploy-history';
import { flowTable, summaryTable, type PlacedRow } from './deploy-report';

export async function report(r: Rollout): Promise<number> {
  const rows = await Promise.all(r.flows.tracked.map((t) => t.row));
  say(`step 7: where each of the ${rows.length} flows ran (first and last workflow task's build; for a card update, the tasks that accepted and completed it), and each card workflow`);
  const placed = await placements(r, r.flows.tracked);
  const table: PlacedRow[] = r.flows.tracked.map((t, i) => {
    const p = placed.get(t)!;
    return { phase: t.phase, flow: t.flow, workflowId: t.workflowId, first: first(p), last: last(p), failedOn: p.failedOn, ok: rows[i].ok, outcome: rows[i].outcome };
  });
  const cards = await cardRows(r);
  process.stdout.write(`\n${flowTable([...table, ...cards])}\n\n${summaryTable([...table, ...cards])}\n\n`);

  r.checks.that(rows.every((row) => row.ok), `every flow ended as asked: ${rows.filter((row) => row.ok).length} of ${rows.length} (the two cards asked to fail failed CardProvisioningFailed, the two KYC asked to be rejected were)`);
  await ledgerExact(r);
  const d = await deliverySummary(r.cluster.control);
  say(`webhooks: ${d.delivered} of ${d.total} delivered`);
  const ok = r.checks.failed.length === 0;
  say(ok ? `PASSED: all ${r.checks.count} checks held, in ${minutes(elapsed())}` : `FAILED: ${r.checks.failed.length} of ${r.checks.count} checks did not hold: ${r.checks.failed.join('; ')}`);
  if (ok) rmSync(r.cluster.dir, { recursive: true, force: true });
  else say(`logs kept in ${r.cluster.dir}`);
  return ok ? 0 : 1;
}

/** One row per card workflow (auto-upgrade: it moves with each promotion). */
async function cardRows(r: Rollout): Promise<PlacedRow[]> {
  const ids = r.flows.cards.map((c) => entityWorkflowId('card', c.cardId));
  const histories = await historiesOf(r, ids);
  return r.flows.cards.map((c, i) => {
    const p = placementOf(histories.get(ids[i])!, buildOfPid(r));
    const builds = [...new Set(p.builds)].join(', ');
    return { phase: c.phase, flow: 'cardLifecycle', workflowId: ids[i], first: first(p), last: last(p), failedOn: p.failedOn, ok: true, outcome: `running; tasks on ${builds}` };
  });
}

/** No violation in the sandbox ledger, and each card's balance exactly what our completed flows moved. */
async function ledgerExact(r: Rollout): Promise<void> {
  const ledger = await r.cluster.control.ledger();
  const balances = new Map(ledger.cards.map((c) => [c.cardId, c.availableBalance]));
  const wrong = r.flows.cards.filter((c) => balances.get(c.cardId) !== c.expected);
  const moved = r.flows.cards.reduce((sum, c) => sum + c.expected, 0);
  r.checks.that(
    ledger.violations.length === 0 && wrong.length === 0,
    ledger.violations.length === 0 && wrong.length === 0
      ? `sandbox ledger exact: no violation in ${ledger.entryCount} entries, and all ${r.flows.cards.length} cards hold what our flows moved (${(moved / 100).toFixed(2)} in all)`
      : `sandbox ledger: ${ledger.violations.length} violation(s) ${JSON.stringify(ledger.violations.slice(0, 5))}; ${wrong.length} card(s) off: ${wrong.slice(0, 5).map((c) => `${c.cardId} ${balances.get(c.cardId)} != ${c.expected}`).join(', ')}`,
  );
}

const minutes = (ms: number) => `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
