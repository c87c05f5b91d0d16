/**
 * deploy/helm/card-issuing as a platform engineer installs it as is (issue 31): replicas spread over
 * nodes and zones, a NetworkPolicy per component, no ServiceAccount token, env per component (extraEnv,
 * reconciliation's knobs, NODE_OPTIONS from the memory limit), the bridge's preStop delay,
 * reconciliation on by default, the key-rotation secrets (the PIN private keys on the worker only),
 * issue 50's keys (the signal MAC key on the bridge and the workers, the card action trusted keys on
 * the workers, the codec endpoint's encode grant only when asked for), Temporal TLS on by default and
 * mounted so rotation reaches the files, and one Temporal credential per process. Skipped without
 * helm, like helm-chart.test.ts.
 */
import { helm, helmTemplate as template, type Doc } from '../helpers/helm';

interface EnvVar { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }
const COMPONENTS = ['worker', 'bridge', 'codec'] as const;

function find(docs: Doc[], kind: string, component: string): Doc {
  const doc = docs.find((d) => d.kind === kind && d.metadata.name === `rel-card-issuing-${component}`);
  if (!doc) throw new Error(`no ${kind} for ${component}`);
  return doc;
}

const podOf = (docs: Doc[], component: string) => find(docs, 'Deployment', component).spec.template.spec;
/** A hook Job's pod: rollout (rel-card-issuing-rollout-<build>) or nexus-endpoint. */
const jobPod = (docs: Doc[], component: string) => {
  const job = docs.find((d) => d.kind === 'Job' && d.spec.template.metadata.labels['app.kubernetes.io/component'] === component);
  if (!job) throw new Error(`no Job for ${component}`);
  return job.spec.template.spec;
};
const envOf = (docs: Doc[], component: string): EnvVar[] => podOf(docs, component).containers[0].env;
const envMap = (docs: Doc[], component: string) => Object.fromEntries(envOf(docs, component).map((e) => [e.name, e.value ?? e.valueFrom]));

(helm ? describe : describe.skip)('helm chart, hardened (issue 31)', () => {
  const defaults = helm ? template().docs : [];

  test('every Deployment spreads its replicas over nodes and zones (ScheduleAnyway), overridable per component or globally', () => {
    for (const c of COMPONENTS) {
      expect(podOf(defaults, c).topologySpreadConstraints).toEqual(
        ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'].map((topologyKey) => ({
          maxSkew: 1,
          topologyKey,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'card-issuing', 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': c } },
        })),
      );
    }
    const own = template('bridge.topologySpreadConstraints[0].maxSkew=2', 'bridge.topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname', 'bridge.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule').docs;
    expect(podOf(own, 'bridge').topologySpreadConstraints).toEqual([expect.objectContaining({ maxSkew: 2, whenUnsatisfiable: 'DoNotSchedule' })]);
    expect(podOf(own, 'worker').topologySpreadConstraints).toHaveLength(2);
    const none = template('topologySpreadConstraints=null').docs;
    for (const c of COMPONENTS) expect(podOf(none, c)).not.toHaveProperty('topologySpreadConstraints');
  });

  test('NetworkPolicy: the codec endpoint only from the Temporal UI, the bridge from the ingress controller, metrics from Prometheus; egress only to what each calls', () => {
    const policy = (docs: Doc[], c: string) => find(docs, 'NetworkPolicy', c).spec;
    const ports = (rules: { ports: { port: number }[] }[]) => rules.map((r) => r.ports.map((p) => p.port).join('+'));
    for (const c of COMPONENTS) {
      expect(policy(defaults, c).policyTypes).toEqual(['Ingress', 'Egress']);
      expect(policy(defaults, c).podSelector.matchLabels['app.kubernetes.io/component']).toBe(c);
    }
    const codec = policy(defaults, 'codec');
    expect(codec.ingress).toEqual([{ ports: [{ protocol: 'TCP', port: 4030 }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'temporal' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'temporal', 'app.kubernetes.io/component': 'web' } } }] }]);
    expect(ports(codec.egress)).toEqual(['53+53']); // DNS only: no Temporal, no provider
    const jwks = ['codec.jwksUrl=https://idp.example/jwks', 'codec.jwtIssuer=https://idp.example', 'codec.jwtAudience=temporal-ui'];
    expect(ports(policy(template(...jwks).docs, 'codec').egress)).toEqual(['53+53', '443']);
    // JWKS without issuer and audience, or over plain http, is refused at render: any token the identity provider signed would do.
    expect(template(jwks[0]).out).toMatch(/codec.jwtIssuer and codec.jwtAudience must be set with codec.jwksUrl/);
    expect(template('codec.jwksUrl=http://idp.example/jwks', ...jwks.slice(1)).out).toMatch(/codec.jwksUrl must be an https:\/\/ URL/);

    const bridge = policy(defaults, 'bridge');
    expect(ports(bridge.ingress)).toEqual(['4020', '9464']);
    expect(bridge.ingress[0].from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }]);
    expect(bridge.ingress[1].from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    // The bridge only verifies the provider's webhooks: Temporal and DNS, no provider.
    expect(ports(bridge.egress)).toEqual(['53+53', '7233']);

    const worker = policy(defaults, 'worker');
    expect(ports(worker.ingress)).toEqual(['9464']);
    expect(ports(worker.egress)).toEqual(['53+53', '7233', '443']);
    // Temporal: the namespace of temporal.address's Service; the provider: HTTPS to the configured CIDRs.
    expect(worker.egress[1].to).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'temporal' } } }]);
    expect(worker.egress[2].to).toEqual([{ ipBlock: { cidr: '0.0.0.0/0' } }]);

    const custom = template(
      'networkPolicy.provider.cidrs={203.0.113.0/24}',
      'networkPolicy.temporal.to[0].ipBlock.cidr=10.9.0.0/16',
      'networkPolicy.temporal.port=7234',
      'networkPolicy.bridge.from[0].namespaceSelector.matchLabels.team=edge',
      'networkPolicy.metrics.from=null',
      'otelEndpoint=http://collector.observability:4318',
    ).docs;
    const w = policy(custom, 'worker');
    expect(w.egress.slice(1)).toEqual([
      { to: [{ ipBlock: { cidr: '10.9.0.0/16' } }], ports: [{ protocol: 'TCP', port: 7234 }] },
      { to: [{ ipBlock: { cidr: '203.0.113.0/24' } }], ports: [{ protocol: 'TCP', port: 443 }] },
      { to: [{ namespaceSelector: {} }], ports: [{ protocol: 'TCP', port: 4318 }] },
    ]);
    expect(w.ingress).toEqual([{ ports: [{ protocol: 'TCP', port: 9464 }] }]); // no `from`: any source
    expect(policy(custom, 'bridge').ingress[0].from).toEqual([{ namespaceSelector: { matchLabels: { team: 'edge' } } }]);
    // Temporal Cloud (outside the cluster, no fixed IPs): the port only.
    expect(policy(template('temporal.address=ns.acct.tmprl.cloud:7233').docs, 'worker').egress[1].to).toEqual([{ ipBlock: { cidr: '0.0.0.0/0' } }]);
    expect(template('networkPolicy.enabled=false').docs.map((d) => d.kind)).not.toContain('NetworkPolicy');
  });

  test('no pod mounts a ServiceAccount token; the chart\'s ServiceAccount has automount off, or an existing one is named', () => {
    for (const c of COMPONENTS) expect(podOf(defaults, c)).toMatchObject({ automountServiceAccountToken: false, serviceAccountName: 'rel-card-issuing' });
    expect(defaults.find((d) => d.kind === 'ServiceAccount')).toMatchObject({ metadata: { name: 'rel-card-issuing' }, automountServiceAccountToken: false });
    const existing = template('serviceAccount.create=false', 'serviceAccount.name=platform-sa').docs;
    expect(existing.map((d) => d.kind)).not.toContain('ServiceAccount');
    for (const c of COMPONENTS) expect(podOf(existing, c)).toMatchObject({ automountServiceAccountToken: false, serviceAccountName: 'platform-sa' });
  });

  test('extraEnv (global and per component) adds variables and replaces the chart\'s of the same name; reconciliation\'s knobs are values of their own', () => {
    expect(envMap(defaults, 'worker')).toMatchObject({ SCHEDULES: 'on', RECONCILE_BUDGET_SHARE: '0.1', ENTITY_WORKFLOW_CACHE_SIZE: '100' });
    const knobs = envMap(template('reconciliation.budgetShare=0.2', 'worker.entityWorkflowCacheSize=500').docs, 'worker');
    expect(knobs).toMatchObject({ RECONCILE_BUDGET_SHARE: '0.2', ENTITY_WORKFLOW_CACHE_SIZE: '500' });

    const { docs } = template(
      'extraEnv[0].name=TZ', 'extraEnv[0].value=UTC',
      'extraEnv[1].name=LOG_LEVEL', 'extraEnv[1].value=warn',
      'worker.extraEnv[0].name=ENTITY_WORKFLOW_CACHE_SIZE', 'worker.extraEnv[0].value=250',
      'worker.extraEnv[1].name=LOG_LEVEL', 'worker.extraEnv[1].value=debug',
      'bridge.extraEnv[0].name=HTTPS_PROXY', 'bridge.extraEnv[0].valueFrom.secretKeyRef.name=proxy', 'bridge.extraEnv[0].valueFrom.secretKeyRef.key=url',
    );
    for (const c of COMPONENTS) {
      const names = envOf(docs, c).map((e) => e.name);
      expect(new Set(names).size).toBe(names.length); // replaced, never duplicated
      expect(envMap(docs, c).TZ).toBe('UTC');
    }
    expect(envMap(docs, 'worker')).toMatchObject({ ENTITY_WORKFLOW_CACHE_SIZE: '250', LOG_LEVEL: 'debug' });
    expect(envMap(docs, 'codec').LOG_LEVEL).toBe('warn');
    expect(envMap(docs, 'bridge').HTTPS_PROXY).toEqual({ secretKeyRef: { name: 'proxy', key: 'url' } });
    expect(envMap(docs, 'codec')).not.toHaveProperty('HTTPS_PROXY');
  });

  test('NODE_OPTIONS caps V8\'s heap at 75 % of each container\'s memory limit (Mi and Gi), unless overridden', () => {
    const heap = (docs: Doc[], c: string) => envMap(docs, c).NODE_OPTIONS;
    expect(COMPONENTS.map((c) => heap(defaults, c))).toEqual(['--max-old-space-size=768', '--max-old-space-size=288', '--max-old-space-size=192']); // 1Gi, 384Mi, 256Mi
    const sized = template('worker.resources.limits.memory=1.5Gi', 'bridge.resources.limits.memory=500Mi', 'codecServer.extraEnv[0].name=NODE_OPTIONS', 'codecServer.extraEnv[0].value=--max-old-space-size=100').docs;
    expect(COMPONENTS.map((c) => heap(sized, c))).toEqual(['--max-old-space-size=1152', '--max-old-space-size=375', '--max-old-space-size=100']);
    const bad = template('worker.resources.limits.memory=2gb');
    expect(bad.status).not.toBe(0);
    expect(bad.out).toContain('worker.resources.limits.memory "2gb": give it in Mi or Gi');
  });

  test('the bridge keeps serving for a preStop delay before SIGTERM, and its grace period must outlast that delay', () => {
    const bridge = podOf(defaults, 'bridge');
    expect(bridge.containers[0].lifecycle).toEqual({ preStop: { exec: { command: ['sleep', '10'] } } });
    expect(bridge.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(15);
    expect(podOf(template('bridge.preStopDelaySeconds=0').docs, 'bridge').containers[0]).not.toHaveProperty('lifecycle');
    const short = template('bridge.preStopDelaySeconds=20');
    expect(short.status).not.toBe(0);
    expect(short.out).toContain('bridge.terminationGracePeriodSeconds (20) must be at least bridge.preStopDelaySeconds + 5 = 25 s');
    expect(template('bridge.preStopDelaySeconds=20', 'bridge.terminationGracePeriodSeconds=30').status).toBe(0);
  });

  test('reconciliation runs by default (SCHEDULES=on on the worker) and reconciliation.schedules=false turns it off', () => {
    expect(envMap(defaults, 'worker').SCHEDULES).toBe('on');
    expect(envMap(template('reconciliation.schedules=false').docs, 'worker').SCHEDULES).toBe('off');
  });

  test('key rotation: retired payload keys reach every process; the PIN private keys reach the worker only, never the codec endpoint', () => {
    const previous = { secretKeyRef: { name: 'card-issuing-codec', key: 'payload-codec-previous-keys', optional: true } };
    for (const c of COMPONENTS) expect(envMap(defaults, c).PAYLOAD_CODEC_PREVIOUS_KEYS).toEqual(previous);
    expect(envMap(defaults, 'worker')).toMatchObject({
      PIN_SEAL_PRIVATE_KEY: { secretKeyRef: { name: 'card-issuing-pin-seal', key: 'pin-seal-private-key' } },
      PIN_SEAL_KEY_ID: '2026-11',
      PIN_SEAL_PREVIOUS_KEYS: { secretKeyRef: { name: 'card-issuing-pin-seal', key: 'pin-seal-previous-keys', optional: true } },
    });
    for (const c of ['bridge', 'codec']) {
      expect(envOf(defaults, c).filter((e) => e.name.startsWith('PIN_SEAL'))).toEqual([]);
      expect(JSON.stringify(find(defaults, 'Deployment', c))).not.toContain('card-issuing-pin-seal');
    }
    // Nor anything of Temporal's: the codec endpoint never connects to it.
    expect(envOf(template('secrets.temporalApiKey.name=tc').docs, 'codec').filter((e) => e.name.startsWith('TEMPORAL_'))).toEqual([]);
  });

  test("each process gets only the secrets it uses: the provider's API secret the worker alone, the webhook secret the bridge alone, no provider secret the codec endpoint", () => {
    const secretsOf = (c: string) => envOf(defaults, c).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name).sort();
    expect(secretsOf('worker')).toEqual(['CARD_ACTION_TRUSTED_KEYS', 'PAYLOAD_CODEC_KEY', 'PAYLOAD_CODEC_PREVIOUS_KEYS', 'PIN_SEAL_PREVIOUS_KEYS', 'PIN_SEAL_PRIVATE_KEY', 'PROVIDER_API_KEY', 'PROVIDER_API_SECRET', 'SIGNAL_MAC_KEY', 'SIGNAL_MAC_PREVIOUS_KEYS']);
    expect(secretsOf('bridge')).toEqual(['PAYLOAD_CODEC_KEY', 'PAYLOAD_CODEC_PREVIOUS_KEYS', 'PROVIDER_API_KEY', 'PROVIDER_WEBHOOK_SECRET', 'SIGNAL_MAC_KEY', 'SIGNAL_MAC_PREVIOUS_KEYS']);
    expect(secretsOf('codec')).toEqual(['CODEC_AUTH_TOKEN', 'PAYLOAD_CODEC_KEY', 'PAYLOAD_CODEC_PREVIOUS_KEYS']);
  });

  test('Temporal TLS: CA, server name and client certificate, mounted as directories so a rotated Secret reaches the files', () => {
    const { docs } = template('temporal.tls.caSecret=temporal-ca', 'temporal.tls.serverName=frontend.temporal.example', 'temporal.tls.clientSecret=temporal-client');
    for (const c of ['worker', 'bridge']) {
      expect(envMap(docs, c)).toMatchObject({
        TEMPORAL_TLS: 'true',
        TEMPORAL_TLS_CA_PATH: '/etc/temporal-ca/ca.crt',
        TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal.example',
        TEMPORAL_TLS_CERT_PATH: '/etc/temporal-tls/tls.crt',
        TEMPORAL_TLS_KEY_PATH: '/etc/temporal-tls/tls.key',
      });
      const pod = podOf(docs, c);
      expect(pod.volumes).toEqual(expect.arrayContaining([{ name: 'temporal-ca', secret: { secretName: 'temporal-ca' } }, { name: 'temporal-tls', secret: { secretName: 'temporal-client' } }]));
      expect(pod.containers[0].volumeMounts).toEqual(expect.arrayContaining([{ name: 'temporal-ca', mountPath: '/etc/temporal-ca', readOnly: true }, { name: 'temporal-tls', mountPath: '/etc/temporal-tls', readOnly: true }]));
    }
    // A subPath mount is never updated when its Secret changes.
    expect(JSON.stringify(docs)).not.toContain('subPath');
    // 0.1.0's values still work: temporal.tls=true and temporal.tlsSecret.
    const old = template('temporal.tls=true', 'temporal.tlsSecret=legacy-client').docs;
    expect(envMap(old, 'worker')).toMatchObject({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CERT_PATH: '/etc/temporal-tls/tls.crt' });
    expect(podOf(old, 'worker').volumes).toContainEqual({ name: 'temporal-tls', secret: { secretName: 'legacy-client' } });
    // Plaintext only when asked for (a development cluster).
    const plain = template('temporal.tls.enabled=false').docs;
    for (const c of ['worker', 'bridge']) expect(envMap(plain, c)).not.toHaveProperty('TEMPORAL_TLS');
  });

  test('TLS to Temporal is on by default for every process that connects (the workers, the bridge, the Jobs); the codec endpoint never connects', () => {
    const docs = template('nexus.endpoint.create=true', 'nexus.endpoint.everyNamespaceMayCall=true').docs;
    for (const c of ['worker', 'bridge']) expect({ c, tls: envMap(docs, c).TEMPORAL_TLS }).toEqual({ c, tls: 'true' });
    for (const job of ['rollout', 'nexus-endpoint']) {
      const env = Object.fromEntries((jobPod(docs, job).containers[0].env as EnvVar[]).map((e) => [e.name, e.value]));
      expect({ job, tls: env.TEMPORAL_TLS }).toEqual({ job, tls: 'true' });
    }
    expect(envOf(docs, 'codec').filter((e) => e.name.startsWith('TEMPORAL_'))).toEqual([]);
  });

  test("issue 50's keys: the signal MAC key on the bridge and the workers, the card action trusted keys on the workers only; no pod signs card actions", () => {
    const docs = template('nexus.endpoint.create=true', 'nexus.endpoint.everyNamespaceMayCall=true', 'signalMac.keyId=2026-12', 'worker.previous.enabled=true', 'worker.previous.buildId=0.0.9').docs;
    const mac = {
      SIGNAL_MAC_KEY: { secretKeyRef: { name: 'card-issuing-signal-mac', key: 'signal-mac-key' } },
      SIGNAL_MAC_KEY_ID: '2026-12',
      SIGNAL_MAC_PREVIOUS_KEYS: { secretKeyRef: { name: 'card-issuing-signal-mac', key: 'signal-mac-previous-keys', optional: true } },
    };
    expect(envMap(docs, 'worker')).toMatchObject({ ...mac, CARD_ACTION_TRUSTED_KEYS: { secretKeyRef: { name: 'card-issuing-card-actions', key: 'trusted-keys' } } });
    expect(envMap(docs, 'worker-0-0-9')).toMatchObject({ ...mac, CARD_ACTION_TRUSTED_KEYS: expect.anything() });
    // The internet-facing bridge: the MAC key (its signals are the provider's word), and neither the
    // trusted keys, the provider's API secret nor a PIN key.
    const bridge = envMap(docs, 'bridge');
    expect(bridge).toMatchObject(mac);
    for (const name of ['CARD_ACTION_TRUSTED_KEYS', 'PROVIDER_API_SECRET', 'PIN_SEAL_PRIVATE_KEY']) expect({ name, set: name in bridge }).toEqual({ name, set: false });
    expect(JSON.stringify(find(docs, 'Deployment', 'bridge'))).not.toMatch(/card-issuing-card-actions|card-issuing-pin-seal|"api-secret"/);
    // The codec endpoint and the Jobs: none of them.
    const others: Array<[string, EnvVar[]]> = [['codec', envOf(docs, 'codec')], ...['rollout', 'nexus-endpoint'].map((j): [string, EnvVar[]] => [j, jobPod(docs, j).containers[0].env])];
    for (const [who, env] of others) {
      expect({ who, vars: env.map((e) => e.name).filter((n) => /^(SIGNAL_MAC|CARD_ACTION)_/.test(n)) }).toEqual({ who, vars: [] });
    }
    // The signing keys are the callers' own: no pod of the chart holds one.
    expect(JSON.stringify(docs)).not.toContain('CARD_ACTION_SIGNING_KEY');
  });

  test('the codec endpoint: CODEC_ENCODE_TOKEN only when secrets.codec.encodeTokenKey names one, the role settings when set; equal roles or tokens refused', () => {
    expect(envMap(defaults, 'codec')).not.toHaveProperty('CODEC_ENCODE_TOKEN');
    for (const name of ['CODEC_JWT_ROLES_CLAIM', 'CODEC_DECODE_ROLE', 'CODEC_ENCODE_ROLE']) expect(envMap(defaults, 'codec')).not.toHaveProperty(name);
    const docs = template('secrets.codec.encodeTokenKey=codec-encode-token', 'codec.jwtRolesClaim=realm_access.roles', 'codec.decodeRole=ops-read', 'codec.encodeRole=ops-write').docs;
    expect(envMap(docs, 'codec')).toMatchObject({
      CODEC_ENCODE_TOKEN: { secretKeyRef: { name: 'card-issuing-codec', key: 'codec-encode-token' } },
      CODEC_JWT_ROLES_CLAIM: 'realm_access.roles',
      CODEC_DECODE_ROLE: 'ops-read',
      CODEC_ENCODE_ROLE: 'ops-write',
    });
    for (const c of ['worker', 'bridge']) expect(JSON.stringify(find(docs, 'Deployment', c))).not.toContain('codec-encode-token');
    expect(template('codec.encodeRole=card-issuing-codec-decode').out).toContain('codec.encodeRole must differ from codec.decodeRole');
    expect(template('secrets.codec.encodeTokenKey=codec-auth-token').out).toContain('secrets.codec.encodeTokenKey must name another key than secrets.codec.authTokenKey');
  });

  test('one Temporal credential per process: each takes its own client certificate or API key when set, and the shared one only when both of its own are unset', () => {
    const shared = ['temporal.tls.clientSecret=temporal-shared', 'secrets.temporalApiKey.name=temporal-shared-key', 'temporal.tls.caSecret=temporal-ca', 'nexus.endpoint.create=true', 'nexus.endpoint.everyNamespaceMayCall=true'];
    const own = [
      'temporal.credentials.worker.clientSecret=temporal-worker',
      'temporal.credentials.bridge.apiKey.name=temporal-bridge', 'temporal.credentials.bridge.apiKey.key=token',
      'temporal.credentials.rolloutJob.clientSecret=temporal-rollout',
      'temporal.credentials.nexusEndpointJob.apiKey.name=temporal-nexus-admin',
      'temporal.credentials.autoscaler.apiKey.name=temporal-keda',
      'worker.autoscaling.enabled=true', 'worker.autoscaling.skipCapabilityCheck=true',
      'worker.previous.enabled=true', 'worker.previous.buildId=0.0.9',
    ];
    const pods = (docs: Doc[]) => ({
      worker: podOf(docs, 'worker'),
      'worker-previous': podOf(docs, 'worker-0-0-9'),
      bridge: podOf(docs, 'bridge'),
      rollout: jobPod(docs, 'rollout'),
      'nexus-endpoint': jobPod(docs, 'nexus-endpoint'),
    });
    /** Which Secrets a pod's Temporal connection takes: its client certificate's and its API key's. */
    const credentialOf = (pod: any) => {
      const env = Object.fromEntries((pod.containers[0].env as EnvVar[]).map((e) => [e.name, e.value ?? e.valueFrom]));
      const cert = (pod.volumes as { name: string; secret?: { secretName: string } }[]).find((v) => v.name === 'temporal-tls')?.secret?.secretName;
      const mounted = (pod.containers[0].volumeMounts as { name: string }[]).some((m) => m.name === 'temporal-tls');
      const key = (env.TEMPORAL_API_KEY as { secretKeyRef?: { name: string; key: string } } | undefined)?.secretKeyRef;
      return { cert: cert ?? null, mounted, certPath: env.TEMPORAL_TLS_CERT_PATH ?? null, apiKey: key ? `${key.name}/${key.key}` : null, tls: env.TEMPORAL_TLS, ca: env.TEMPORAL_TLS_CA_PATH };
    };
    const docs = template(...shared, ...own).docs;
    const got = Object.fromEntries(Object.entries(pods(docs)).map(([p, pod]) => [p, credentialOf(pod)]));
    const cert = (name: string) => ({ cert: name, mounted: true, certPath: '/etc/temporal-tls/tls.crt', apiKey: null, tls: 'true', ca: '/etc/temporal-ca/ca.crt' });
    const apiKey = (ref: string) => ({ cert: null, mounted: false, certPath: null, apiKey: ref, tls: 'true', ca: '/etc/temporal-ca/ca.crt' });
    expect(got).toEqual({
      worker: cert('temporal-worker'),
      'worker-previous': cert('temporal-worker'),
      bridge: apiKey('temporal-bridge/token'),
      rollout: cert('temporal-rollout'),
      'nexus-endpoint': apiKey('temporal-nexus-admin/api-key'),
    });
    // Nobody holds the shared credential once each has its own.
    expect(JSON.stringify(docs.filter((d) => d.kind !== 'TriggerAuthentication'))).not.toMatch(/temporal-shared/);
    // KEDA's scaler reads the backlog with its own.
    const auth = docs.find((d) => d.kind === 'TriggerAuthentication')!;
    expect(auth.spec.secretTargetRef).toEqual([{ parameter: 'apiKey', name: 'temporal-keda', key: 'api-key' }]);

    // Unset, each falls back to the shared one, certificate and API key both (as every process did before).
    const fallback = template(...shared, 'worker.autoscaling.enabled=true', 'worker.autoscaling.skipCapabilityCheck=true').docs;
    for (const [p, pod] of Object.entries(pods(template(...shared, 'worker.previous.enabled=true', 'worker.previous.buildId=0.0.9').docs))) {
      expect({ p, ...credentialOf(pod) }).toEqual({ p, cert: 'temporal-shared', mounted: true, certPath: '/etc/temporal-tls/tls.crt', apiKey: 'temporal-shared-key/api-key', tls: 'true', ca: '/etc/temporal-ca/ca.crt' });
    }
    expect(fallback.find((d) => d.kind === 'TriggerAuthentication')!.spec.secretTargetRef.map((r: { parameter: string; name: string }) => `${r.parameter} ${r.name}`)).toEqual(['apiKey temporal-shared-key', 'cert temporal-shared', 'key temporal-shared', 'ca temporal-ca']);
    // One process with its own, the others on the shared one: its own replaces both shared halves.
    const mixed = pods(template(...shared, 'temporal.credentials.bridge.clientSecret=temporal-bridge-cert', 'worker.previous.enabled=true', 'worker.previous.buildId=0.0.9').docs);
    expect(credentialOf(mixed.bridge)).toMatchObject({ cert: 'temporal-bridge-cert', apiKey: null });
    expect(credentialOf(mixed.worker)).toMatchObject({ cert: 'temporal-shared', apiKey: 'temporal-shared-key/api-key' });
    // The codec endpoint never holds one.
    expect(JSON.stringify(find(docs, 'Deployment', 'codec'))).not.toMatch(/temporal-(worker|bridge|rollout|nexus|keda|shared)/);
  });
});
