/**
 * The chart's Nexus endpoint Job (docs/nexus.md): off by default; with nexus.endpoint.create it runs
 * `nexus-endpoint --name=<name>` after each install or upgrade with the worker's Temporal settings
 * (whose TEMPORAL_TASK_QUEUE decides the endpoint's target queue); a bad name is refused at render.
 */
import { helm, helmTemplate, type Doc } from '../helpers/helm';

const maybe = helm ? test : test.skip;
if (!helm) process.stderr.write('skipped: the chart\'s Nexus endpoint tests (no helm on PATH or in the tool cache)\n');

const job = (docs: Doc[]) => docs.find((d) => d.kind === 'Job' && d.metadata.name.endsWith('-nexus-endpoint'));

maybe('no endpoint Job by default; with create, a post-install/upgrade hook Job runs nexus-endpoint with the worker\'s Temporal settings', () => {
  expect(job(helmTemplate().docs)).toBeUndefined();
  // The worker's own extraEnv (where an operator may put a secret of the worker's) is the worker's, not the Job's.
  const rendered = helmTemplate('nexus.endpoint.create=true', 'nexus.endpoint.everyNamespaceMayCall=true', 'nexus.endpoint.name=payments-cards', 'temporal.taskQueue=cards-eu', 'worker.extraEnv[0].name=PIN_SEAL_PREVIOUS_KEYS', 'worker.extraEnv[0].value=secret');
  expect(rendered.status).toBe(0);
  const made = job(rendered.docs) as Doc & { metadata: { annotations: Record<string, string> } };
  expect(made.metadata.annotations['helm.sh/hook']).toBe('post-install,post-upgrade');
  const container = made.spec.template.spec.containers[0];
  expect(container.command).toEqual(['node', 'dist/starter/cli.js', 'nexus-endpoint', '--name=payments-cards']);
  const env = Object.fromEntries(container.env.filter((e: { value?: string }) => e.value !== undefined).map((e: { name: string; value: string }) => [e.name, e.value]));
  expect(env).toMatchObject({ TEMPORAL_TASK_QUEUE: 'cards-eu' });
  // It sends no payload of ours: no payload key, no provider secret, no PIN key.
  const names = container.env.map((e: { name: string }) => e.name);
  for (const secret of ['PAYLOAD_CODEC_KEY', 'PAYLOAD_CODEC_PREVIOUS_KEYS', 'PROVIDER_API_SECRET', 'PIN_SEAL_PRIVATE_KEY', 'PIN_SEAL_PREVIOUS_KEYS', 'SIGNAL_MAC_KEY', 'CARD_ACTION_TRUSTED_KEYS', 'CARD_ACTION_SIGNING_KEY']) expect(names).not.toContain(secret);
  // Its pod is held by a NetworkPolicy of its own: DNS and Temporal out, nothing in.
  const policy = rendered.docs.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name.endsWith('-nexus-endpoint'));
  expect(policy?.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe('nexus-endpoint');
  expect(made.spec.template.metadata.labels['app.kubernetes.io/component']).toBe('nexus-endpoint');
  expect(policy?.spec.ingress).toEqual([]);
  expect(policy?.spec.egress.map((e: { ports: Array<{ port: number }> }) => e.ports.map((p) => p.port).join('+'))).toEqual(['53+53', '7233']);
});

maybe('a name the server would refuse is refused at render, naming the value and the rule', () => {
  const refused = helmTemplate('nexus.endpoint.create=true', 'nexus.endpoint.everyNamespaceMayCall=true', 'nexus.endpoint.name=cards_eu');
  expect(refused.status).not.toBe(0);
  expect(refused.out).toMatch(/nexus\.endpoint\.name must start with a letter, end with a letter or digit, and hold only letters, digits and "-"/);
});

maybe("on a self-hosted cluster every namespace may call an endpoint: the Job is refused at render until that is said (issue 50)", () => {
  const refused = helmTemplate('nexus.endpoint.create=true');
  expect(refused.status).not.toBe(0);
  expect(refused.out).toMatch(/nexus\.endpoint\.create makes endpoints every namespace of a self-hosted cluster may call.*nexus\.endpoint\.everyNamespaceMayCall=true/);
});
