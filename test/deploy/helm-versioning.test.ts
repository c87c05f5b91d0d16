/**
 * deploy/helm/card-issuing and Worker Deployments (docs/versioning.md): the worker declares a build ID
 * (the image's tag unless worker.buildId says otherwise) under worker.deployment.name, and
 * worker.previous runs the build before it beside it (a rainbow deployment) until its pinned flows
 * have ended: a second worker Deployment of the old image, its own build ID, never bootstrapping,
 * with selectors apart from the current one's and the same NetworkPolicy and PodDisruptionBudget
 * cover. Skipped without helm, like helm-chart.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { CHART, helm, helmTemplate as template, type Doc } from '../helpers/helm';

type Labels = Record<string, string>;

/** The rendered objects, which must render. */
function rendered(...sets: string[]): Doc[] {
  const { status, out, docs } = template(...sets);
  expect({ sets, status, out }).toEqual({ sets, status: 0, out });
  return docs;
}

const workerDeployments = (docs: Doc[]) => docs.filter((d) => d.kind === 'Deployment' && d.spec.template.spec.containers[0].command.includes('dist/worker.js'));
const byName = (docs: Doc[], kind: string, name: string) => {
  const doc = docs.find((d) => d.kind === kind && d.metadata.name === name);
  if (!doc) throw new Error(`no ${kind} ${name}`);
  return doc;
};
const envMap = (d: Doc): Record<string, unknown> => Object.fromEntries((d.spec.template.spec.containers[0].env as { name: string; value?: string; valueFrom?: unknown }[]).map((e) => [e.name, e.value ?? e.valueFrom]));
const podLabels = (d: Doc): Labels => d.spec.template.metadata.labels;
/** matchLabels' meaning: every label of the selector, with its value, is on the pod. */
const selects = (selector: { matchLabels: Labels }, labels: Labels) => Object.entries(selector.matchLabels).every(([k, v]) => labels[k] === v);

const VERSIONING_VARS = ['TEMPORAL_DEPLOYMENT_NAME', 'TEMPORAL_WORKER_BUILD_ID', 'TEMPORAL_DEPLOYMENT_BOOTSTRAP'];
const RAINBOW = ['image.tag=2026.11.3', 'worker.previous.enabled=true', 'worker.previous.buildId=2026.11.2'];

(helm ? describe : describe.skip)('helm chart, Worker Deployments (worker.buildId, worker.deployment, worker.previous)', () => {
  test('the worker is versioned by the image tag unless worker.buildId is set; the bridge and the codec endpoint get none of it', () => {
    const defaults = rendered();
    expect(workerDeployments(defaults)).toHaveLength(1);
    const worker = byName(defaults, 'Deployment', 'rel-card-issuing-worker');
    expect(envMap(worker)).toMatchObject({ TEMPORAL_DEPLOYMENT_NAME: 'card-issuing', TEMPORAL_WORKER_BUILD_ID: '0.1.0', TEMPORAL_DEPLOYMENT_BOOTSTRAP: 'if-none' });
    expect(podLabels(worker)['card-issuing/build-id']).toBe('0.1.0');
    for (const c of ['bridge', 'codec']) {
      const env = envMap(byName(defaults, 'Deployment', `rel-card-issuing-${c}`));
      expect({ c, vars: VERSIONING_VARS.filter((v) => v in env) }).toEqual({ c, vars: [] });
    }

    const tagged = byName(rendered('image.tag=2026.11.3'), 'Deployment', 'rel-card-issuing-worker');
    expect(tagged.spec.template.spec.containers[0].image).toBe('card-issuing:2026.11.3');
    expect(envMap(tagged).TEMPORAL_WORKER_BUILD_ID).toBe('2026.11.3');
    // No tag: the chart's appVersion names both the image and the build.
    const untagged = byName(rendered('image.tag='), 'Deployment', 'rel-card-issuing-worker');
    expect([untagged.spec.template.spec.containers[0].image, envMap(untagged).TEMPORAL_WORKER_BUILD_ID]).toEqual(['card-issuing:0.1.0', '0.1.0']);

    const own = byName(rendered('image.tag=2026.11.3', 'worker.buildId=git-4f68f12', 'worker.deployment.name=cards-eu', 'worker.deployment.bootstrap=never'), 'Deployment', 'rel-card-issuing-worker');
    expect(envMap(own)).toMatchObject({ TEMPORAL_DEPLOYMENT_NAME: 'cards-eu', TEMPORAL_WORKER_BUILD_ID: 'git-4f68f12', TEMPORAL_DEPLOYMENT_BOOTSTRAP: 'never' });
    expect(podLabels(own)['card-issuing/build-id']).toBe('git-4f68f12');
  });

  test('the current worker Deployment keeps 0.2.0\'s selector: a Deployment\'s selector cannot change, so every build (and the chart upgrade) rolls it in place', () => {
    for (const sets of [[], RAINBOW, ['image.tag=2026.11.4']]) {
      expect(byName(rendered(...sets), 'Deployment', 'rel-card-issuing-worker').spec.selector).toEqual({
        matchLabels: { 'app.kubernetes.io/name': 'card-issuing', 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'worker' },
      });
    }
  });

  test('worker.previous: a second worker Deployment runs the previous image under its own build ID, never bootstrapping and leaving the schedules alone', () => {
    const docs = rendered(...RAINBOW);
    const workers = workerDeployments(docs);
    expect(workers.map((d) => d.metadata.name).sort()).toEqual(['rel-card-issuing-worker', 'rel-card-issuing-worker-2026-11-2']);
    const current = byName(docs, 'Deployment', 'rel-card-issuing-worker');
    const previous = byName(docs, 'Deployment', 'rel-card-issuing-worker-2026-11-2');

    expect(current.spec.template.spec.containers[0].image).toBe('card-issuing:2026.11.3');
    expect(envMap(current)).toMatchObject({ TEMPORAL_WORKER_BUILD_ID: '2026.11.3', TEMPORAL_DEPLOYMENT_BOOTSTRAP: 'if-none', SCHEDULES: 'on' });
    expect(previous.spec.template.spec.containers[0].image).toBe('card-issuing:2026.11.2');
    expect(envMap(previous)).toMatchObject({ TEMPORAL_WORKER_BUILD_ID: '2026.11.2', TEMPORAL_DEPLOYMENT_BOOTSTRAP: 'never', SCHEDULES: 'off', TEMPORAL_DEPLOYMENT_NAME: 'card-issuing' });
    expect(previous.spec.replicas).toBe(2);
    // Everything else is the worker's: the same secrets, queues and settings.
    const rest = (d: Doc) => { const env = envMap(d); for (const v of ['TEMPORAL_WORKER_BUILD_ID', 'TEMPORAL_DEPLOYMENT_BOOTSTRAP', 'SCHEDULES']) delete env[v]; return env; };
    expect(rest(previous)).toEqual(rest(current));
    expect(previous.spec.template.spec.containers[0].volumeMounts).toEqual(current.spec.template.spec.containers[0].volumeMounts);
    expect(previous.spec.template.metadata.annotations).toEqual(current.spec.template.metadata.annotations);
    expect([podLabels(current)['card-issuing/build-id'], podLabels(previous)['card-issuing/build-id']]).toEqual(['2026.11.3', '2026.11.2']);

    // Neither Deployment's selector matches the other's pods, and each matches its own.
    for (const [own, other] of [[current, previous], [previous, current]]) {
      expect(selects(own.spec.selector, podLabels(own))).toBe(true);
      expect({ own: own.metadata.name, selectsOther: selects(own.spec.selector, podLabels(other)) }).toEqual({ own: own.metadata.name, selectsOther: false });
    }
    expect(previous.spec.selector.matchLabels['card-issuing/build-id']).toBe('2026.11.2');

    // Both builds' pods: under a NetworkPolicy with the worker's rules and under a PodDisruptionBudget, one each.
    const policies = docs.filter((d) => d.kind === 'NetworkPolicy');
    const workerRules = ({ ingress, egress, policyTypes }: any) => ({ ingress, egress, policyTypes });
    const pdbs = docs.filter((d) => d.kind === 'PodDisruptionBudget');
    for (const d of workers) {
      const mine = policies.filter((p) => selects(p.spec.podSelector, podLabels(d)));
      expect({ pod: d.metadata.name, policies: mine.length }).toEqual({ pod: d.metadata.name, policies: 1 });
      expect(workerRules(mine[0].spec)).toEqual(workerRules(byName(docs, 'NetworkPolicy', 'rel-card-issuing-worker').spec));
      // More than one budget over a pod makes the eviction API refuse to evict it.
      expect({ pod: d.metadata.name, pdbs: pdbs.filter((p) => selects(p.spec.selector, podLabels(d))).length }).toEqual({ pod: d.metadata.name, pdbs: 1 });
      // Still scraped as the worker: the worker's alerts cover the previous build's workers.
      expect(d.spec.template.metadata.annotations['prometheus.io/job']).toBe('card-issuing-worker');
    }

    // The autoscaler scales the current build; the previous one keeps worker.previous.replicas.
    const scaled = rendered(...RAINBOW, 'worker.autoscaling.enabled=true', 'worker.autoscaling.skipCapabilityCheck=true', 'temporal.credentials.autoscaler.apiKey.name=keda-temporal', 'worker.previous.replicas=4');
    expect(byName(scaled, 'ScaledObject', 'rel-card-issuing-worker').spec.scaleTargetRef).toEqual({ name: 'rel-card-issuing-worker' });
    expect(byName(scaled, 'Deployment', 'rel-card-issuing-worker').spec).not.toHaveProperty('replicas');
    expect(byName(scaled, 'Deployment', 'rel-card-issuing-worker-2026-11-2').spec.replicas).toBe(4);
  });

  test('worker.previous with its own image tag, and a build ID that is no valid label or name as it is', () => {
    const docs = rendered('image.tag=1.10.0', 'worker.previous.enabled=true', 'worker.previous.buildId=1.9.0+Build.7', 'worker.previous.image.tag=1.9.0-r2');
    const previous = byName(docs, 'Deployment', 'rel-card-issuing-worker-1-9-0-build-7');
    expect(previous.spec.template.spec.containers[0].image).toBe('card-issuing:1.9.0-r2');
    expect(envMap(previous).TEMPORAL_WORKER_BUILD_ID).toBe('1.9.0+Build.7');
    // `+` is no label character: the label holds the build ID with `_` in its place.
    expect(podLabels(previous)['card-issuing/build-id']).toBe('1.9.0_Build.7');
  });

  test('worker.previous refuses an empty build ID and the current one, naming the value to change', () => {
    const empty = template('worker.previous.enabled=true');
    expect(empty.status).not.toBe(0);
    expect(empty.out).toContain('worker.previous.enabled=true needs worker.previous.buildId');

    for (const sets of [['worker.previous.enabled=true', 'worker.previous.buildId=0.1.0'], ['image.tag=2026.11.3', 'worker.buildId=b7', 'worker.previous.enabled=true', 'worker.previous.buildId=b7']]) {
      const same = template(...sets);
      expect({ sets, status: same.status }).toEqual({ sets, status: 1 });
      expect(same.out).toContain(`worker.previous.buildId "${sets[sets.length - 1].split('=')[1]}" is the current build ID (worker.buildId, else image.tag)`);
    }
    // Off, worker.previous is not looked at.
    expect(template('worker.previous.buildId=0.1.0').status).toBe(0);
  });

  test('build IDs, deployment names and bootstrap modes the worker would refuse are refused at render time; extraEnv cannot set them', () => {
    const refusals: [string[], string][] = [
      [['worker.buildId=v1@sha'], 'worker.buildId "v1@sha" (TEMPORAL_WORKER_BUILD_ID; empty: image.tag) must be 1-100 characters of [A-Za-z0-9_.+-]'],
      [[`image.tag=${'a'.repeat(101)}`], 'must be 1-100 characters of [A-Za-z0-9_.+-]'],
      [['worker.deployment.name=cards+eu'], 'worker.deployment.name "cards+eu" (TEMPORAL_DEPLOYMENT_NAME) must be 1-100 characters of [A-Za-z0-9_.-]'],
      [['worker.deployment.bootstrap=always'], 'worker.deployment.bootstrap "always" (TEMPORAL_DEPLOYMENT_BOOTSTRAP) must be if-none or never'],
      [['worker.previous.enabled=true', 'worker.previous.buildId=old build'], 'worker.previous.buildId "old build" must be 1-100 characters'],
      [['worker.extraEnv[0].name=TEMPORAL_WORKER_BUILD_ID', 'worker.extraEnv[0].value=x'], 'extraEnv sets TEMPORAL_WORKER_BUILD_ID: set worker.buildId'],
      [['extraEnv[0].name=TEMPORAL_DEPLOYMENT_BOOTSTRAP', 'extraEnv[0].value=never'], 'extraEnv sets TEMPORAL_DEPLOYMENT_BOOTSTRAP'],
    ];
    for (const [sets, message] of refusals) {
      const res = template(...sets);
      expect({ sets, status: res.status, refused: res.out.includes(message) }).toEqual({ sets, status: 1, refused: true });
    }
  });

  test('helm lint --strict passes with the previous build on, with and without autoscaling', () => {
    for (const extra of [[], ['worker.autoscaling.enabled=true', 'worker.autoscaling.skipCapabilityCheck=true', 'temporal.credentials.autoscaler.apiKey.name=keda-temporal', 'worker.deployment.bootstrap=never']]) {
      const sets = [...RAINBOW, ...extra];
      const lint = spawnSync(helm!, ['lint', '--strict', CHART, ...sets.flatMap((s) => ['--set', s])], { encoding: 'utf8' });
      expect({ sets, out: lint.stdout + lint.stderr }).toEqual({ sets, out: expect.stringContaining('0 chart(s) failed') });
    }
  });
});
