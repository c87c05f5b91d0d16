/**
 * deploy/helm/card-issuing: `helm lint` passes and `helm template` renders what a platform team
 * needs: probes on /health and /ready, resources, a PodDisruptionBudget per component, a grace
 * period longer than the worker's drain, secrets only from existing Secret objects, non-root with
 * a read-only root filesystem, and the worker scaled on its task queues' backlog (KEDA).
 * helm comes from the PATH or tools/helm.ts's cache (npm test's provisioning builds it with Go);
 * without it these tests are skipped and say so.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { findHelm, HELM_VERSION } from '../../tools/helm';

const CHART = join(__dirname, '../../deploy/helm/card-issuing');
const helm = findHelm();
const why = `helm is not installed (npx tsx tools/helm.ts builds ${HELM_VERSION} with Go)`;
if (!helm) process.stderr.write(`helm chart: skipped, ${why}\n`);

/** `helm template` with `--set` values; the rendered YAML is checked as text (the project has no YAML parser). */
function template(...sets: string[]): { status: number | null; out: string } {
  const res = spawnSync(helm!, ['template', 'rel', CHART, ...sets.flatMap((s) => ['--set', s])], { encoding: 'utf8' });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

(helm ? describe : describe.skip)(`helm chart${helm ? '' : `: SKIPPED, ${why}`}`, () => {
  test('helm lint passes', () => {
    const res = spawnSync(helm!, ['lint', '--strict', CHART], { encoding: 'utf8' });
    expect(res.stdout).toContain('0 chart(s) failed');
    expect(res.status).toBe(0);
  });

  test('renders the worker, the bridge and the codec endpoint, each with a PodDisruptionBudget, and the worker scaled on its queues', () => {
    const { status, out } = template();
    expect(status).toBe(0);
    const kinds = [...out.matchAll(/^kind: (\w+)\n(?:.*\n)*?\s+name: (\S+)/gm)].map((m) => `${m[1]} ${m[2]}`).sort();
    expect(kinds).toEqual([
      'Deployment rel-card-issuing-bridge',
      'Deployment rel-card-issuing-codec',
      'Deployment rel-card-issuing-worker',
      'PodDisruptionBudget rel-card-issuing-bridge',
      'PodDisruptionBudget rel-card-issuing-codec',
      'PodDisruptionBudget rel-card-issuing-worker',
      'ScaledObject rel-card-issuing-worker',
      'Service rel-card-issuing-bridge',
      'Service rel-card-issuing-codec',
    ]);
    // The backlog of the main queue (workflow and activity tasks) and of the entity queue, not the rate-class queues.
    expect([...out.matchAll(/taskQueue: "([^"]+)"\n\s+queueTypes: "([^"]+)"/g)].map((m) => `${m[1]} ${m[2]}`)).toEqual([
      'card-issuing workflow,activity',
      'card-issuing-entities workflow',
    ]);
    expect(out).toMatch(/type: temporal/);
  });

  test('every container: probes on /health and /ready, resources, non-root, read-only root filesystem', () => {
    const { out } = template();
    const containers = out.split(/\n\s+- name: (?=worker\n|bridge\n|codec\n)/).slice(1);
    expect(containers).toHaveLength(3);
    for (const c of containers) {
      expect(c).toMatch(/livenessProbe:\n\s+httpGet: \{ path: \/health/);
      expect(c).toMatch(/readinessProbe:\n\s+httpGet: \{ path: \/(ready|health)/);
      expect(c).toMatch(/readOnlyRootFilesystem: true/);
      expect(c).toMatch(/allowPrivilegeEscalation: false/);
      expect(c).toMatch(/resources:\n\s+limits:\n\s+memory: /);
    }
    // The worker and the bridge are ready only when Temporal answers.
    expect(containers.filter((c) => /readinessProbe:\n\s+httpGet: \{ path: \/ready/.test(c))).toHaveLength(2);
    expect(out.match(/runAsNonRoot: true/g)).toHaveLength(3);
  });

  test('secrets come only from existing Secret objects, never from values', () => {
    const { out } = template('secrets.temporalApiKey.name=temporal-cloud');
    for (const name of ['PROVIDER_API_KEY', 'PROVIDER_API_SECRET', 'PROVIDER_WEBHOOK_SECRET', 'PAYLOAD_CODEC_KEY', 'CODEC_AUTH_TOKEN', 'TEMPORAL_API_KEY']) {
      const entries = [...out.matchAll(new RegExp(`- name: ${name}\\n\\s+(\\w+):`, 'g'))].map((m) => m[1]);
      expect(entries.length).toBeGreaterThan(0);
      expect(new Set(entries)).toEqual(new Set(['valueFrom']));
    }
    expect(out).toMatch(/kind: TriggerAuthentication/);
    expect(out).toMatch(/parameter: apiKey\n\s+name: temporal-cloud/);
  });

  test('the worker gets longer to stop than its drain takes, and a shorter grace period is refused', () => {
    expect(template().out).toMatch(/terminationGracePeriodSeconds: 60\n/);
    const short = template('worker.terminationGracePeriodSeconds=30');
    expect(short.status).not.toBe(0);
    expect(short.out).toContain('worker.terminationGracePeriodSeconds (30) must be at least 45 s');
  });

  test('without autoscaling the worker has a fixed replica count and no ScaledObject', () => {
    const { out } = template('worker.autoscaling.enabled=false', 'worker.replicas=3');
    expect(out).not.toMatch(/kind: ScaledObject/);
    expect(out).toMatch(/name: rel-card-issuing-worker\n(?:.*\n)*?spec:\n\s+replicas: 3/);
  });
});
