/** The bench's JSON report and the table printed from it. */
import { renderTable } from '../src/starter/output';
import { describeAbove, describeActions } from './actions';

export interface Report {
  startedAt: string;
  finishedAt?: string;
  mode: 'quick' | 'full';
  machine: Record<string, unknown>;
  /** Each measure's figures; `ratio`-named fields are the results, absolute figures are context. */
  measures: Record<string, any>;
}

interface Row {
  measure: string;
  figure: string;
  ratio: string;
  goal: string;
  met: string;
  context: string;
}

export function renderReport(report: Report): string {
  const m = report.measures;
  const rows: Row[] = [];
  const row = (measure: string, figure: string, ratio: number | undefined, goal: string, met: boolean | undefined, context: string) =>
    rows.push({ measure, figure, ratio: ratio === undefined || Number.isNaN(ratio) ? '-' : ratio.toFixed(3), goal, met: met === undefined ? '-' : met ? 'yes' : 'NO', context });
  if (m.P1) {
    for (const [endpoint, e] of Object.entries<any>(m.P1.endpoints)) {
      const busy = e.saturated.filter(Boolean).length;
      // Unsaturated windows say nothing of the limiter when they fall short; when even they reach the goal, it is met.
      // NaN when counted here, null once the JSON was written: no saturated window either way.
      const saturated = typeof e.minRatio === 'number' && Number.isFinite(e.minRatio);
      const ratio = saturated ? e.minRatio : e.minRatioAllWindows;
      const mean = saturated ? e.meanRatio : '-';
      row('P1', `${endpoint}: window used (min)`, ratio, '>= 0.95', ratio >= 0.95, `mean ${mean}, limit ${e.limit}, ${busy} of ${e.windows} windows saturated; min of all ${e.minRatioAllWindows}`);
    }
    row('P1', 'answers 429 / failed flows', undefined, '0 / 0', m.P1.answers429 === 0 && m.P1.failedFlows === 0, `${m.P1.answers429} / ${m.P1.failedFlows}`);
  }
  if (m.P2) {
    row('P2', 'webhook accept p50 vs bare signalWithStart', m.P2.p50Ratio, '<= 1.3', m.P2.p50Ratio <= 1.3, `${m.P2.webhook.p50} vs ${m.P2.bare.p50} ms`);
    row('P2', 'webhook accept p99 vs bare signalWithStart', m.P2.p99Ratio, '<= 2', m.P2.p99Ratio <= 2, `${m.P2.webhook.p99} vs ${m.P2.bare.p99} ms, max ${m.P2.webhook.max} ms`);
    if (m.P2.control) row('P2', 'webhook accept p50 vs bare signalWithStart from its own process', m.P2.controlP50Ratio, '-', undefined, `${m.P2.webhook.p50} vs ${m.P2.control.p50} ms (control: the bare call with a process boundary like the bridge's)`);
    if (m.P2.steps) row('P2', 'steps inside the bridge, means', undefined, '-', undefined, Object.entries<number>(m.P2.steps).map(([step, ms]) => `${step} ${ms}`).join(', ') + ' ms');
    if (m.P2.hops) {
      const h = m.P2.hops;
      row('P2', 'hops, means', undefined, '-', undefined, `bare signalWithStart ${h.bareMeanMs} ms; in the bridge ${h.bridgeMeanMs} ms (beyond the bare call: ${h.bridgeChecksMs}); delivery hop ${h.deliveryHopMs} ms; whole ${h.webhookMeanMs} ms`);
    }
  }
  if (m.P3) {
    if (m.P3.keyedRatio !== undefined) row('P3', 'fundCard keyed flows/s vs bare', m.P3.keyedRatio, '>= 0.9', m.P3.keyedRatio >= 0.9, `${m.P3.fundCardKeyedPerSec} vs ${m.P3.barePerSec} flows/s, ${m.P3.failed} failed (keyed and keyless)`);
    const v = m.P3.breakdown?.visibility;
    row('P3', 'fundCard keyless (derived key) flows/s vs bare', m.P3.ratio, m.P3.keyedRatio === undefined ? '>= 0.9' : '-', m.P3.keyedRatio === undefined ? m.P3.ratio >= 0.9 : undefined, `${m.P3.fundCardPerSec} vs ${m.P3.barePerSec} flows/s${v ? `; its earlier-run lookup: ${v.listsPerFlow} list(s) of ${v.meanListMs} ms per flow` : ''}`);
    const actions = m.P3.breakdown?.actions;
    for (const name of actions ? (['keyed', 'keyless'] as const) : []) {
      const a = actions[name];
      row('P3', `actions per fundCard ${name} (with its card workflow's share) above bare`, undefined, '<= 2', a.above.extra <= 2, `${describeActions(a.total)} vs bare ${describeActions(actions.bare)}; above: ${describeAbove(a.above)}`);
    }
    if (m.P3.callRatio) row('P3', 'fundCard vs bare with the same provider call', m.P3.callRatio, '-', undefined, `${m.P3.fundCardPerSec} vs ${m.P3.bareWithCallPerSec} flows/s: our layer beyond the call`);
    if (m.P3.callCodecRatio) row('P3', 'fundCard vs bare with the call and our payload codec', m.P3.callCodecRatio, '-', undefined, `${m.P3.fundCardPerSec} vs ${m.P3.bareWithCallAndCodecPerSec} flows/s: our layer beyond the call and the codec`);
    row('P3', 'control: bare with project modules vs bare', m.P3.projectModulesRatio, '-', undefined, `${m.P3.bareWithProjectPerSec} flows/s: the module graph's share`);
    if (m.P3.bareWithSchemasPerSec) row('P3', 'control: bare with request rules vs bare', m.P3.bareWithSchemasPerSec / m.P3.barePerSec, '-', undefined, `${m.P3.bareWithSchemasPerSec} flows/s`);
    const b = m.P3.breakdown;
    if (b) {
      const shape = (x: any) => `${x.events} ev, ${x.workflowTasks} wft, ${x.activities} act, ${x.markers} mk, ${x.upserts} ups`;
      const acts = (x: any) =>
        Object.entries<any>(x.activityTypes)
          .map(([type, a]) => `${type} ${a.perFlow}x ${a.waitMs}/${a.runMs}`)
          .join(', ') || '-';
      const card = b.cardWorkflowPerFundCard;
      row('P3', 'breakdown per flow: history', undefined, '-', undefined, `fundCard ${shape(b.fundCard)}; its card workflow ${shape(card)} (${card.runs} run(s)); bare ${shape(b.bare)}; bare+call ${shape(b.bareWithCall)}`);
      row('P3', 'breakdown per flow: activity wait/run ms', undefined, '-', undefined, `fundCard ${acts(b.fundCard)}; card workflow ${acts(card)}; bare ${acts(b.bare)}; bare+call ${acts(b.bareWithCall)}`);
      row('P3', 'breakdown per flow: workflow task wait/run ms', undefined, '-', undefined, `fundCard ${b.fundCard.workflowTaskWaitMs}/${b.fundCard.workflowTaskRunMs}; card workflow ${card.workflowTaskWaitMs}/${card.workflowTaskRunMs}; bare ${b.bare.workflowTaskWaitMs}/${b.bare.workflowTaskRunMs}; bare+call ${b.bareWithCall.workflowTaskWaitMs}/${b.bareWithCall.workflowTaskRunMs}`);
      row('P3', 'breakdown per flow: card workflow told, visibility', undefined, '-', undefined, `${b.fundCard.signalsSent} signal(s) sent (${b.fundCard.signalsFailed} found no workflow), card took ${card.signalsReceived} signal(s) and ${card.updates} update(s); visibility ${b.visibility.listsPerFlow} list(s) of ${b.visibility.meanListMs} ms${b.visibility.countsPerFlow ? `, ${b.visibility.countsPerFlow} count(s) of ${b.visibility.meanCountMs} ms` : ''}`);
    }
  }
  if (m.P5) {
    const p = m.P5;
    row('P5', 'card update movements/s vs bare (saturated)', p.throughputRatio, '>= 0.9', p.throughputRatio >= 0.9, `${p.throughput.oursPerSec} vs ${p.throughput.barePerSec} movements/s over ${p.cards} cards; failed ${p.failed.ours} / ${p.failed.bare}`);
    if (p.throughput.bareWithCodecPerSec) row('P5', 'control: bare with our payload codec vs bare (saturated)', p.throughput.bareWithCodecPerSec / p.throughput.barePerSec, '-', undefined, `${p.throughput.bareWithCodecPerSec} movements/s: what the codec's rule costs on this path`);
    row('P5', 'card update p50 vs bare', p.p50Ratio, '<= 1.2', p.p50Ratio <= 1.2, `${p.latency.ours.p50} vs ${p.latency.bare.p50} ms at ${p.latency.ratePerSec}/s`);
    row('P5', 'card update p99 vs bare', p.p99Ratio, '<= 2', p.p99Ratio <= 2, `${p.latency.ours.p99} vs ${p.latency.bare.p99} ms`);
    row('P5', 'one card: movements/s', p.oneCard.oursPerSec / p.oneCard.barePerSec, '-', undefined, `${p.oneCard.oursPerSec} vs ${p.oneCard.barePerSec}/s (${p.oneCard.oursMsPerMovement} ms each: the card serialises its movements)`);
    const a = p.actions;
    // Issue 52: a card update costs what a bare update with one activity costs, +0.5 at most.
    row('P5', 'actions per movement above bare', undefined, '<= 0.5', a.above.extra <= 0.5, `${describeActions(a.ours)} vs bare ${describeActions(a.bare)}; above: ${describeAbove(a.above)}`);
  }
  if (m.P4) {
    row('P4', 'memory (RSS) per parked flow vs bare', m.P4.memoryRatio, '<= 1.5', m.P4.memoryRatio <= 1.5, `${m.P4.flowRssKb} vs ${m.P4.bareRssKb} KB per flow`);
    row('P4', 'workflow-thread heap per parked flow vs bare', m.P4.threadHeapRatio, '-', undefined, `${m.P4.flowThreadHeapKb} vs ${m.P4.bareThreadHeapKb} KB per flow, after a full GC in every thread`);
    row('P4', 'control: bare with request rules vs bare', m.P4.bareWithSchemasRssKb / m.P4.bareRssKb, '-', undefined, `${m.P4.bareWithSchemasRssKb} KB per workflow`);
    row('P4', 'control: bare with all project modules vs bare', m.P4.bareWithProjectRssKb / m.P4.bareRssKb, '-', undefined, `${m.P4.bareWithProjectRssKb} KB per workflow`);
    row('P4', 'decision->completion p99 evicted vs cached', m.P4.p99Ratio, '<= 3', m.P4.p99Ratio <= 3, `${m.P4.evicted.p99} vs ${m.P4.cached.p99} ms`);
    row('P4', 'flows completed', m.P4.completedRatio, '1', m.P4.completedRatio === 1, `${m.P4.completed} of ${m.P4.flows}`);
  }
  if (m.R1) {
    const r = m.R1;
    for (const [endpoint, e] of Object.entries<any>(r.endpoints)) {
      row('R1', `${endpoint}: window used beside reconciliation (min)`, e.minRatioWithReconcile, '>= 0.95', e.minRatioWithReconcile >= 0.95, `with ${e.withReconcile.join('/')}, baseline ${e.baseline.join('/')} of ${e.limit}`);
    }
    row('R1', 'reconciliation reads per window vs its share', r.maxShareRatio, '<= 1', r.maxShareRatio <= 1, `beside the load ${r.reconcileReadsPerWindow.besideLoad.join('/') || '-'}, after it ${r.reconcileReadsPerWindow.tail.join('/') || '-'} (share: ${r.share} × window)`);
    row('R1', 'flows\' GET /cards wait p99, with vs without', r.waitRatio, '<= 1', r.waitRatio <= 1, `${r.waits.p99.withReconcile} vs ${r.waits.p99.baseline} ms (${r.waits.samples.withReconcile} vs ${r.waits.samples.baseline} calls)${r.waits.p99PerWindow ? `; p99 per window, baseline then beside: ${r.waits.p99PerWindow.join('/')} ms` : ''}`);
    const behind = (r.waits.behind ?? []).map((b: any) => `${b.phase} +${b.afterMs}/${b.waitedMs} ms`).join(', ');
    row('R1', 'flows\' GET /cards calls a reconciliation read went before', undefined, '0', r.waits.behindReconcile === 0, `${r.waits.behindReconcile}${behind ? ` (phase +read after the call/call's wait: ${behind})` : ''}`);
    const where429 = Object.entries<any>(r.answers429By ?? {}).flatMap(([phase, by]) => Object.entries(by).map(([endpoint, n]) => `${phase} ${endpoint} ${n}`)).join(', ');
    row('R1', 'answers 429', undefined, '0', r.answers429 === 0, `${r.answers429}${where429 ? ` (${where429})` : ''}`);
    row('R1', `reconcile ${r.checked} cards: the tail after the load vs its physical limit`, r.durationRatio, '-', undefined, `tail ${Math.round(r.tailMs / 1000)} s on ${(r.tailWindowMs ?? r.windowMs) / 1000} s windows vs ${Math.round(r.tailPhysicalLimitMs / 1000)} s (its cards ÷ share of the window; the first ${r.drainWindows} window(s) the flows' backlog drained); whole run ${Math.round(r.reconcileMs / 1000)} s, ${r.differences} difference(s)${r.differencesFound ? ` ${JSON.stringify(r.differencesFound)}` : ''}`);
  }
  if (m.S1) row('S1', 'dev server (file) WAL+NORMAL vs defaults', m.S1.ratio, '> 1', m.S1.ratio > 1, `${m.S1.walNormalPerSec} vs ${m.S1.defaultPragmasPerSec} flows/s`);
  const table = renderTable(rows as unknown as Record<string, unknown>[], ['measure', 'figure', 'ratio', 'goal', 'met', 'context'], { alignRight: ['ratio'], rule: true });
  return `bench (${report.mode}) ${report.startedAt}\n${table}`;
}
