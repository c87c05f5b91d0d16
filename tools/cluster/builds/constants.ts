/**
 * What the variant builds of `npm run cluster-deploy` do differently, named once for the builds
 * and for deploy.ts's checks (no workflow imports: the run's own process loads this).
 */

/** The memo a card workflow run started on v2 carries (v2's unmarked change to it, builds/v2.ts). */
export const V2_MEMO = { clusterDeploy: 'started on v2' } as const;
/** v2's unmarked change: a pause before the money moves (a TimerStarted where v1 upserted and scheduled). */
export const V2_PAUSE_MS = 500;
/** What v3's bad change throws (builds/v3.ts). */
export const V3_FAILURE = 'cluster-deploy v3: a deliberate bug';
