/**
 * deploy/helm/card-issuing: `helm lint --strict` and `helm template` pass for every values combination
 * docs/deployment.md shows, and the chart renders what a platform team needs: probes on /health and /ready,
 * resources, a PodDisruptionBudget per component, a grace period longer than the worker's drain,
 * secrets only from existing Secret objects, non-root with a read-only root filesystem, and the
 * worker scaled on its task queues' backlog when KEDA is there (optional). The hardening issue 31
 * asked for (spread, NetworkPolicy, tokens, env, rotation, TLS) is in helm-hardening.test.ts.
 * helm comes from the PATH or tools/helm.ts's cache (npm test's provisioning builds it with Go);
 * without it these tests are skipped and say so.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findHelm, HELM_VERSION } from '../../tools/helm';

// js-yaml is in node_modules through eslint (not a dependency of ours) and has no types here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { loadAll } = require('js-yaml') as { loadAll: (text: string) => unknown[] };

const CHART = join(__dirname, '../../deploy/helm/card-issuing');
const helm = findHelm();
const why = `helm is not installed (npx tsx tools/helm.ts builds ${HELM_VERSION} with Go)`;
if (!helm) process.stderr.write(`helm chart: skipped, ${why}\n`);

interface Doc { kind: string; metadata: { name: string }; spec: any }

/** `helm template` with `--set` values (and other flags as given); its documents parsed. */
function template(...args: string[]): { status: number | null; out: string; docs: Doc[] } {
  const flags = args.flatMap((a) => (a.startsWith('--') ? [a] : ['--set', a]));
  const res = spawnSync(helm!, ['template', 'rel', CHART, ...flags], { encoding: 'utf8' });
  const docs = res.status === 0 ? (loadAll(res.stdout).filter(Boolean) as Doc[]) : [];
  return { status: res.status, out: `${res.stdout}${res.stderr}`, docs };
}

const KEDA = '--api-versions=keda.sh/v1alpha1';
/** TLS to Temporal is on by default, and KEDA's scaler speaks it only with a credential: its own here. */
const KEDA_CREDENTIAL = 'temporal.credentials.autoscaler.apiKey.name=keda-temporal';

/** The helm commands of docs/deployment.md's "Deploying on Kubernetes" section, as their flags (--set, --api-versions). */
function readmeCombinations(): string[][] {
  const page = readFileSync(join(__dirname, '../../docs/deployment.md'), 'utf8');
  const start = page.indexOf('## Deploying on Kubernetes');
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end < 0 ? undefined : end);
  const commands = section.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => /^\s*helm (upgrade --install|template) /.test(l));
  return commands.map((cmd) => {
    const tokens = cmd.trim().split(/\s+/).map((t) => t.replace(/^'(.*)'$/, '$1'));
    const flags: string[] = [];
    tokens.forEach((t, i) => {
      if (t === '--set') flags.push(tokens[i + 1]);
      if (t.startsWith('--api-versions')) flags.push(t.includes('=') ? t : `--api-versions=${tokens[i + 1]}`);
    });
    return flags;
  });
}

(helm ? describe : describe.skip)(`helm chart${helm ? '' : `: SKIPPED, ${why}`}`, () => {
  test('helm lint --strict and helm template pass for every combination of values docs/deployment.md shows', () => {
    const combinations = readmeCombinations();
    // The install command, KEDA, Temporal Cloud, mTLS with a private CA, network policy peers, no reconciliation, extraEnv.
    expect(combinations.length).toBeGreaterThanOrEqual(7);
    for (const flags of [[], ...combinations]) {
      // helm lint sees no cluster (it has no --api-versions): where docs/deployment.md turns KEDA or the alerts on, the cluster has KEDA or the Prometheus Operator.
      const sets = [...flags.filter((f) => !f.startsWith('--')), 'worker.autoscaling.skipCapabilityCheck=true', 'alerts.skipCapabilityCheck=true'].flatMap((s) => ['--set', s]);
      const lint = spawnSync(helm!, ['lint', '--strict', CHART, ...sets], { encoding: 'utf8' });
      expect({ flags, out: lint.stdout + lint.stderr }).toEqual({ flags, out: expect.stringContaining('0 chart(s) failed') });
      const { status, out } = template(...flags, KEDA, '--api-versions=monitoring.coreos.com/v1');
      expect({ flags, status, out }).toEqual({ flags, status: 0, out });
    }
  });

  test('renders the worker, the bridge and the codec endpoint, each with a PodDisruptionBudget and a NetworkPolicy; no ScaledObject unless asked', () => {
    const { status, docs } = template();
    expect(status).toBe(0);
    const component = ['worker', 'bridge', 'codec'].map((c) => `rel-card-issuing-${c}`);
    expect(docs.map((d) => `${d.kind} ${d.metadata.name}`).sort()).toEqual(
      [
        ...component.flatMap((n) => [`Deployment ${n}`, `PodDisruptionBudget ${n}`, `NetworkPolicy ${n}`]),
        'Service rel-card-issuing-bridge',
        'Service rel-card-issuing-codec',
        'ServiceAccount rel-card-issuing',
        // The everyday upgrade's rollout (worker-rollout.yaml): a hook Job, talking to Temporal only.
        'Job rel-card-issuing-rollout-0-1-0',
        'NetworkPolicy rel-card-issuing-rollout',
      ].sort(),
    );
    // With autoscaling the PodDisruptionBudgets stay.
    expect(template('worker.autoscaling.enabled=true', KEDA, KEDA_CREDENTIAL).docs.filter((d) => d.kind === 'PodDisruptionBudget')).toHaveLength(3);
  });

  test("the rollout Job runs after every install and upgrade for this release's build: deploy rollout with the chart's steps, Temporal and the payload key only; off, none", () => {
    const docs = template('image.tag=2.0.1', 'worker.rollout.steps={5,25,75}', 'worker.rollout.soakSeconds=30').docs;
    const job = docs.find((d) => d.kind === 'Job') as any;
    expect(job.metadata.name).toBe('rel-card-issuing-rollout-2-0-1');
    expect(job.metadata.annotations).toEqual({ 'helm.sh/hook': 'post-install,post-upgrade', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    expect(job.spec.backoffLimit).toBe(0);
    const [c] = pod.containers;
    expect(c.command).toEqual(['node', 'dist/starter/cli.js', 'deploy', 'rollout', '--build=2.0.1', '--steps=5,25,75', '--soak=30', '--failing-attempts=3', '--wait-for-workers=300']);
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    const names = c.env.map((e: { name: string }) => e.name);
    expect(names).toEqual(expect.arrayContaining(['TEMPORAL_ADDRESS', 'TEMPORAL_DEPLOYMENT_NAME', 'PAYLOAD_CODEC_KEY']));
    // Nor the signal MAC key (its payloads are not the provider's word), nor a card action key: `deploy rollout` acts on no card.
    for (const secret of ['PROVIDER_API_SECRET', 'PROVIDER_WEBHOOK_SECRET', 'PIN_SEAL_PRIVATE_KEY', 'CODEC_AUTH_TOKEN', 'CODEC_ENCODE_TOKEN', 'SIGNAL_MAC_KEY', 'SIGNAL_MAC_PREVIOUS_KEYS', 'CARD_ACTION_TRUSTED_KEYS', 'CARD_ACTION_SIGNING_KEY']) expect(names).not.toContain(secret);
    expect(template('worker.rollout.enabled=false').docs.filter((d) => d.kind === 'Job' || d.metadata.name.endsWith('-rollout'))).toEqual([]);
  });

  test('every container: probes on /health and /ready, resources, non-root, read-only root filesystem', () => {
    const pods = template().docs.filter((d) => d.kind === 'Deployment').map((d) => d.spec.template.spec);
    expect(pods).toHaveLength(3);
    for (const pod of pods) {
      const [c] = pod.containers;
      expect(c.livenessProbe.httpGet.path).toBe('/health');
      expect(['/ready', '/health']).toContain(c.readinessProbe.httpGet.path);
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(c.resources.limits.memory).toBeTruthy();
      expect(pod.securityContext.runAsNonRoot).toBe(true);
    }
    // The worker and the bridge are ready only when Temporal answers.
    expect(pods.filter((p) => p.containers[0].readinessProbe.httpGet.path === '/ready')).toHaveLength(2);
  });

  test('secrets come only from existing Secret objects, never from values', () => {
    const { docs } = template('secrets.temporalApiKey.name=temporal-cloud', 'worker.autoscaling.enabled=true', KEDA, 'secrets.codec.encodeTokenKey=codec-encode-token');
    const env = docs.filter((d) => d.kind === 'Deployment').flatMap((d) => d.spec.template.spec.containers[0].env as { name: string; value?: string }[]);
    for (const name of ['PROVIDER_API_KEY', 'PROVIDER_API_SECRET', 'PROVIDER_WEBHOOK_SECRET', 'PAYLOAD_CODEC_KEY', 'PAYLOAD_CODEC_PREVIOUS_KEYS', 'CODEC_AUTH_TOKEN', 'CODEC_ENCODE_TOKEN', 'TEMPORAL_API_KEY', 'PIN_SEAL_PRIVATE_KEY', 'PIN_SEAL_PREVIOUS_KEYS', 'SIGNAL_MAC_KEY', 'SIGNAL_MAC_PREVIOUS_KEYS', 'CARD_ACTION_TRUSTED_KEYS']) {
      const entries = env.filter((e) => e.name === name);
      expect({ name, n: entries.length > 0 }).toEqual({ name, n: true });
      for (const e of entries) expect(e).toEqual({ name, valueFrom: { secretKeyRef: expect.objectContaining({ name: expect.any(String), key: expect.any(String) }) } });
    }
    const auth = docs.find((d) => d.kind === 'TriggerAuthentication')!;
    expect(auth.spec.secretTargetRef).toContainEqual({ parameter: 'apiKey', name: 'temporal-cloud', key: 'api-key' });
  });

  test('the worker gets longer to stop than its drain takes, and a shorter grace period is refused', () => {
    const worker = template().docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'rel-card-issuing-worker')!;
    expect(worker.spec.template.spec.terminationGracePeriodSeconds).toBe(60);
    const short = template('worker.terminationGracePeriodSeconds=30');
    expect(short.status).not.toBe(0);
    expect(short.out).toContain('worker.terminationGracePeriodSeconds (30) must be at least 45 s');
  });

  test('KEDA is optional: asked for where the cluster has it, the worker scales on the backlog of its main and entity queues', () => {
    const noKeda = template('worker.autoscaling.enabled=true');
    expect(noKeda.status).not.toBe(0);
    expect(noKeda.out).toContain('worker.autoscaling.enabled=true needs KEDA (>= 2.17): the cluster serves no keda.sh/v1alpha1 API');
    expect(template('worker.autoscaling.enabled=true', 'worker.autoscaling.skipCapabilityCheck=true', KEDA_CREDENTIAL).status).toBe(0);

    const { docs } = template('worker.autoscaling.enabled=true', KEDA, 'secrets.temporalApiKey.name=temporal-cloud', 'temporal.tls.serverName=frontend.example');
    const triggers = docs.find((d) => d.kind === 'ScaledObject')!.spec.triggers as { type: string; metadata: Record<string, string> }[];
    // The rate-class queues are left out: more workers would not drain them (docs/rate-budget.md).
    expect(triggers.map((t) => `${t.type} ${t.metadata.taskQueue} ${t.metadata.queueTypes}`)).toEqual(['temporal card-issuing workflow,activity', 'temporal card-issuing-entities workflow']);
    for (const t of triggers) {
      // enableTLS exists only after KEDA 2.20; TLS with an API key is every release's default. tlsServerName: KEDA >= 2.18.
      expect(t.metadata).not.toHaveProperty('enableTLS');
      expect(t.metadata.tlsServerName).toBe('frontend.example');
    }
    expect(docs.find((d) => d.metadata.name === 'rel-card-issuing-worker' && d.kind === 'Deployment')!.spec).not.toHaveProperty('replicas');

    // KEDA's scaler speaks TLS only with a client certificate or an API key: TLS alone is refused, not scaled in plaintext.
    const tlsAlone = template('worker.autoscaling.enabled=true', KEDA, 'temporal.tls.enabled=true');
    expect(tlsAlone.status).not.toBe(0);
    expect(tlsAlone.out).toContain('KEDA\'s temporal scaler connects with TLS only when it has a client certificate');
  });

  test('without autoscaling the worker has a fixed replica count and no ScaledObject', () => {
    const { docs } = template('worker.replicas=3');
    expect(docs.map((d) => d.kind)).not.toContain('ScaledObject');
    expect(docs.find((d) => d.metadata.name === 'rel-card-issuing-worker' && d.kind === 'Deployment')!.spec.replicas).toBe(3);
  });
});
