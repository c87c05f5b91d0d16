/**
 * The environment, read and validated once at the edge (CONTRACTS §2).
 * Entry points call `loadConfigOrExit()` and pass the result (or a slice of it) down;
 * nothing else in the code base reads `process.env`.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULT_DECODE_ROLE, DEFAULT_ENCODE_ROLE, DEFAULT_ROLE_CLAIMS, type CodecAuthConfig } from '../codec/codec-auth';
import type { CardActionKey } from '../codec/card-capability';
import type { CodecKeys } from '../codec/payload-codec';
import { DEVELOPMENT_NEXUS_CALLER, NexusCallersError, parseNexusCallers, type NexusCaller } from '../nexus/callers';
import { DEVELOPMENT_PIN_PRIVATE_KEY } from '../shared/development-keys';
import { ConfigError } from './errors';
import { assertKeysApart, cardActionKeys, keyring, pinKeys } from './keys';
import { SANDBOX_API_SECRET, developmentDefaults, refuseDevelopmentWhereReal } from './rules';

export { ConfigError } from './errors';
export { DEVELOPMENT_CARD_ACTION_KEY } from './keys';
export { SANDBOX_API_SECRET, assertCodecEndpointAuth, assertPinKeys, assertProviderTransport, requireSecrets } from './rules';

const port = z.coerce.number().int('must be an integer').min(1, 'must be a port between 1 and 65535').max(65535, 'must be a port between 1 and 65535');
const url = z.string().url('must be an absolute URL such as http://127.0.0.1:4010');
const hostPort = z.string().regex(/^[^\s:]+:\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:7233');
const nonEmpty = z.string().min(1, 'must not be empty');
const bool = z
  .enum(['true', 'false', '1', '0', ''], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');
const positiveInt = z.coerce.number().int('must be an integer').positive('must be a positive integer');
const base64Key = z
  .string()
  .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes encoded in base64 (openssl rand -base64 32)');

/** A development key for the payload codec, used only when PAYLOAD_CODEC_KEY is not set (a warning is printed). */
export const DEVELOPMENT_CODEC_KEY = Buffer.alloc(32, 7).toString('base64');
/** The workers' PIN private key of development (no PIN_SEAL_PRIVATE_KEY nor PIN_SEAL_PUBLIC_KEY): public, so never taken outside it. */
export { DEVELOPMENT_PIN_PRIVATE_KEY };
/** The signal MAC key of development (no SIGNAL_MAC_KEY): public, so never taken outside it. */
export const DEVELOPMENT_SIGNAL_MAC_KEY = Buffer.alloc(32, 23).toString('base64');
/** Settings of 1.x that 2.0 no longer reads: a process that finds one says so (the symmetric card-seal key went with issue 40). */
const RETIRED_SETTINGS = ['CARD_SEAL_KEY', 'CARD_SEAL_KEY_ID', 'CARD_SEAL_PREVIOUS_KEYS'] as const;
const x25519Key = z
  .string()
  .refine((v) => /^[A-Za-z0-9+/]{43}=$/.test(v), 'must be an X25519 key: 32 bytes encoded in base64 (docs/operations.md, "PIN keys")');
const keyId = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1-32 characters of [A-Za-z0-9_-]');

const envSchema = z.object({
  TEMPORAL_ADDRESS: hostPort.default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: nonEmpty.default('default'),
  TEMPORAL_TASK_QUEUE: nonEmpty.default('card-issuing'),
  TEMPORAL_CLI_PATH: z.string().optional(),
  TEMPORAL_TLS: bool.default(false),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  TEMPORAL_TLS_CA_PATH: z.string().optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().regex(/^[A-Za-z0-9.-]{1,253}$/, 'must be a DNS name, e.g. temporal.example.internal').optional(),
  TEMPORAL_API_KEY: z.string().optional(),
  TEMPORAL_DEPLOYMENT_NAME: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1-100 characters of [A-Za-z0-9_.-], e.g. card-issuing').default('card-issuing'),
  TEMPORAL_WORKER_BUILD_ID: z.string().regex(/^[A-Za-z0-9_.+-]{1,100}$/, 'must be 1-100 characters of [A-Za-z0-9_.+-], e.g. the image tag or the commit').optional(),
  TEMPORAL_DEPLOYMENT_BOOTSTRAP: z.enum(['if-none', 'never'], { message: "must be 'if-none' or 'never'" }).default('if-none'),
  PROVIDER_BASE_URL: url.default('http://127.0.0.1:4010'),
  PROVIDER_API_KEY: z.string().regex(/^key_.+/, 'must start with key_').default('key_sandbox'),
  PROVIDER_API_SECRET: z.string().regex(/^secret_.+/, 'must start with secret_').default(SANDBOX_API_SECRET),
  PROVIDER_WEBHOOK_SECRET: z.string().min(1, 'must not be empty').optional(),
  PROVIDER_TIMEOUT_MS: positiveInt.default(15000),
  PROVIDER_RATE_WINDOW_MS: positiveInt.default(60000),
  SANDBOX_PORT: port.default(4010),
  SANDBOX_WEBHOOK_URL: url.default('http://127.0.0.1:4020/webhooks/provider'),
  BRIDGE_PORT: port.default(4020),
  BRIDGE_SIGNED_PATH: z.string().regex(/^\/[^\s?#]*$/, 'must be a path starting with /, e.g. /webhooks/provider').optional(),
  BRIDGE_TIMESTAMP_TOLERANCE_MS: positiveInt.default(5 * 60 * 1000),
  LISTEN_HOST: z.string().refine((v) => isIP(v) !== 0, 'must be an IP address such as 127.0.0.1 or 0.0.0.0').default('127.0.0.1'),
  CODEC_SERVER_PORT: port.default(4030),
  CODEC_ALLOWED_ORIGINS: z
    .string()
    .transform((v) => v.split(',').map((o) => o.trim()).filter(Boolean))
    .pipe(z.array(z.string().url('must be a comma-separated list of origins such as http://localhost:8233')))
    .optional(),
  PAYLOAD_CODEC_KEY: base64Key.optional(),
  CODEC_AUTH_TOKEN: z.string().min(16, 'must be at least 16 characters (openssl rand -base64 24)').optional(),
  CODEC_JWKS_URL: url.refine((v) => v.startsWith('https://'), 'must be an https:// URL: the keys that decide who reads decrypted history must not travel in the clear').optional(),
  CODEC_JWT_ISSUER: nonEmpty.optional(),
  CODEC_JWT_AUDIENCE: nonEmpty.optional(),
  // Encoding is a grant of its own (codec/codec-auth.ts): unset, no shared token encodes.
  CODEC_ENCODE_TOKEN: z.string().min(16, 'must be at least 16 characters (openssl rand -base64 24)').optional(),
  CODEC_JWT_ROLES_CLAIM: z
    .string()
    .transform((v) => v.split(',').map((c) => c.trim()))
    .pipe(z.array(z.string().regex(/^\S+$/, 'must be a comma-separated list of claim names, e.g. roles,groups')))
    .default([...DEFAULT_ROLE_CLAIMS]),
  CODEC_DECODE_ROLE: z.string().regex(/^\S(.*\S)?$/, 'must be a role name without surrounding spaces, e.g. card-issuing-codec-decode').default(DEFAULT_DECODE_ROLE),
  CODEC_ENCODE_ROLE: z.string().regex(/^\S(.*\S)?$/, 'must be a role name without surrounding spaces, e.g. card-issuing-codec-encode').default(DEFAULT_ENCODE_ROLE),
  PAYLOAD_CODEC_KEY_ID: keyId.default('dev'),
  PAYLOAD_CODEC_PREVIOUS_KEYS: z.string().optional(),
  PIN_SEAL_PRIVATE_KEY: x25519Key.optional(),
  PIN_SEAL_PUBLIC_KEY: x25519Key.optional(),
  PIN_SEAL_KEY_ID: keyId.default('dev'),
  PIN_SEAL_PREVIOUS_KEYS: z.string().optional(),
  CARD_ACTION_SIGNING_KEY: base64Key.optional(),
  CARD_ACTION_KEY_ID: keyId.default('dev'),
  CARD_ACTION_SUBJECT: z.string().regex(/^[A-Za-z0-9_.@:/-]{1,128}$/, 'must be 1-128 characters of [A-Za-z0-9_.@:/-], e.g. payments-service or ops:alice').optional(),
  CARD_ACTION_TRUSTED_KEYS: z.string().optional(),
  SIGNAL_MAC_KEY: base64Key.optional(),
  SIGNAL_MAC_KEY_ID: keyId.default('dev'),
  SIGNAL_MAC_PREVIOUS_KEYS: z.string().optional(),
  KYC_DOCUMENTS_DIR: nonEmpty.default('.data/documents'),
  METRICS_PORT: port.optional(),
  ENTITY_WORKFLOW_CACHE_SIZE: positiveInt.default(100),
  WORKFLOW_BUNDLE_PATH: z.string().regex(/\.js$/, 'must be the path of a prebuilt workflow bundle (.js), e.g. dist/workflow-bundle.js').optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().regex(/^https?:\/\/[^\s/]+/, 'must be an OTLP/HTTP base URL such as http://127.0.0.1:4318').pipe(url).optional(),
  OTEL_SERVICE_NAME: nonEmpty.optional(),
  SCHEDULES: z.enum(['on', 'off'], { message: 'must be on or off' }).default('off'),
  OPEN_ITEM_MIN_ASK_MS: z.coerce.number('must be a number of milliseconds').int('must be a whole number of milliseconds').min(1000, 'must be at least 1000 (1 s); the default, 60000, is what production should keep').default(60_000),
  RECONCILE_BUDGET_SHARE: z.coerce.number('must be a number').gt(0, 'must be a share above 0 and below 1, e.g. 0.1').lt(1, 'must be a share above 0 and below 1, e.g. 0.1').default(0.1),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error'], { message: 'must be debug, info, warn or error' }).default('info'),
  CARD_ISSUING_DEVELOPMENT: bool.default(false),
  // Checked by parseNexusCallers (nexus/callers.ts), which reads the file of `@path`.
  NEXUS_CALLERS: z.string().optional(),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    cliPath?: string;
    tls: boolean;
    tlsCertPath?: string;
    tlsKeyPath?: string;
    /** A private CA's certificate (PEM) the frontend's certificate is checked against; unset: the system's CAs. */
    tlsCaPath?: string;
    /** The name the frontend's certificate must carry when it differs from the address's host. */
    tlsServerName?: string;
    apiKey?: string;
    /** The Worker Deployment the workers join and the CLI's `deploy` commands act on (TEMPORAL_DEPLOYMENT_NAME). */
    deploymentName: string;
    /**
     * Worker Deployments (docs/versioning.md): with a build ID, every worker of the process declares
     * this deployment version, short flows are pinned to it and long-lived ones auto-upgrade.
     * Without one (development, tests), the workers are unversioned.
     */
    deployment?: {
      name: string;
      buildId: string;
      /** `if-none`: a worker sets its build current when the deployment has no current version yet (its first deploy). */
      bootstrap: 'if-none' | 'never';
    };
  };
  provider: {
    baseUrl: string;
    apiKey: string;
    apiSecret: string;
    webhookSecret: string;
    timeoutMs: number;
    rateWindowMs: number;
    /** The most of each endpoint's window that reconciliation reads may take (docs/rate-budget.md). */
    reconcileBudgetShare: number;
    /** The soonest an open item asks the provider, whatever pace its caller polled at (issue 51: a 1 ms poll was its first ask). */
    openItemMinAskMs: number;
  };
  /** Where our HTTP listeners bind: loopback unless told otherwise (0.0.0.0 in containers). */
  listenHost: string;
  sandbox: { port: number; webhookUrl: string };
  bridge: {
    port: number;
    /** The path webhook signatures cover, when a proxy rewrites it; unset: the request's own path. */
    signedPath?: string;
    timestampToleranceMs: number;
  };
  /** The payload keyring: encrypt with the current key, decrypt with it or any retired one (docs/operations.md, "Rotating keys"). */
  codec: CodecKeys & { isDevelopmentKey: boolean; serverPort: number; allowedOrigins?: string[]; auth: CodecAuthConfig };
  /**
   * The workers' PIN key pair (issue 40; codec/card-secrets.ts): callers seal PINs to `publicKey`,
   * the workers open them with `privateKey` or a retired one. A process that only seals (the CLI)
   * may hold the public key alone (PIN_SEAL_PUBLIC_KEY); the codec endpoint never holds a private one.
   */
  pin: PinKeys;
  /** Card action capabilities: what this process signs with, what workers accept (CARD_ACTION_*). */
  cardActions: CardActionConfig;
  /**
   * The key only the bridge and the workers hold (SIGNAL_MAC_KEY): what they send carries a MAC under
   * it, and a workflow takes the provider's word only from a payload that does (codec/payload-codec.ts).
   */
  signalMac: CodecKeys;
  /** Settings this process found that it no longer reads (RETIRED_SETTINGS): the entry points warn. */
  retiredSettings: string[];
  logLevel: Env['LOG_LEVEL'];
  /** The documents store (KYC_DOCUMENTS_DIR, absolute): the only folder KYC documents are uploaded from (documents/store.ts). */
  documentsDir: string;
  /** Where /metrics, /health and /ready are served; none when unset. */
  metricsPort?: number;
  /** A workflow bundle built ahead (the production image); unset: the worker bundles src/workflows at start. */
  workflowBundlePath?: string;
  /** Entity workflows the entity queue's worker keeps cached (fleet/workers.ts). */
  entityWorkflowCacheSize: number;
  /** Traces over OTLP/HTTP (src/observability/tracing.ts); unset: no tracer provider, no interceptors. */
  tracing?: TracingConfig;
  /** SCHEDULES=on: the worker creates or updates the reconciliation schedules at start. */
  schedules: boolean;
  /**
   * Who may call the Nexus service (NEXUS_CALLERS; docs/nexus.md, "Who can call"): one endpoint, queue
   * and handler each. None: no Nexus worker runs. Unset in development: the one caller `dev`.
   */
  nexus: { callers: NexusCaller[] };
  /** CARD_ISSUING_DEVELOPMENT: a secret left unset may take its public development default (requireSecrets). */
  development: boolean;
  /** The secrets that took their public development default because they were not set. */
  developmentDefaults: SecretName[];
}

/** The secrets a process may need; each has a public development default that production never takes. */
export type SecretName = 'PROVIDER_API_SECRET' | 'PROVIDER_WEBHOOK_SECRET' | 'PAYLOAD_CODEC_KEY' | 'PIN_SEAL_PRIVATE_KEY' | 'CARD_ACTION_SIGNING_KEY' | 'CARD_ACTION_TRUSTED_KEYS' | 'SIGNAL_MAC_KEY';

/**
 * Who may act on a card (shared/card-capability.ts): the key this process signs card actions with
 * (clients, the CLI), and the public keys the workers accept them from.
 */
export interface CardActionConfig {
  signing: CardActionKey;
  /** Public keys (Ed25519, base64) by id: CARD_ACTION_TRUSTED_KEYS, or in development the development key's. */
  trustedKeys: Record<string, string>;
}

export interface PinKeys {
  keyId: string;
  /** X25519, 32 bytes in base64: what callers seal PINs to. */
  publicKey: string;
  /** The workers' private key (absent in a process given the public key alone), and retired ones by id. */
  privateKey?: string;
  previousKeys?: Record<string, string>;
  /** Neither key was set: the public development pair, which only development may seal real PINs to. */
  isDevelopmentKey: boolean;
}

export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT, the collector's base URL (spans go to its /v1/traces). */
  endpoint: string;
  /** OTEL_SERVICE_NAME; unset: each process names itself (card-issuing-worker, -bridge, -starter). */
  serviceName?: string;
}

/** Parses the environment; throws a ConfigError whose message is one line naming the variable and the rule. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(stripEmpty(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`configuration: ${String(issue.path[0])} ${issue.message}`);
  }
  const e = parsed.data;
  refuseDevelopmentWhereReal(e, env.NODE_ENV);
  if (e.CODEC_JWKS_URL && (!e.CODEC_JWT_ISSUER || !e.CODEC_JWT_AUDIENCE)) {
    const missing = e.CODEC_JWT_ISSUER ? 'CODEC_JWT_AUDIENCE' : 'CODEC_JWT_ISSUER';
    throw new ConfigError(`configuration: ${missing} must be set when CODEC_JWKS_URL is: without issuer and audience, any token the identity provider signed (another application's) would open decrypted history`);
  }
  if (e.CODEC_ENCODE_TOKEN && e.CODEC_ENCODE_TOKEN === e.CODEC_AUTH_TOKEN) {
    throw new ConfigError('configuration: CODEC_ENCODE_TOKEN must differ from CODEC_AUTH_TOKEN: encoding is a grant of its own, not something every decoder holds');
  }
  if (e.CODEC_ENCODE_ROLE === e.CODEC_DECODE_ROLE) {
    throw new ConfigError('configuration: CODEC_ENCODE_ROLE must differ from CODEC_DECODE_ROLE: encoding is a grant of its own, not something every decoder holds');
  }
  if (e.TEMPORAL_TLS_CERT_PATH && !e.TEMPORAL_TLS_KEY_PATH) {
    throw new ConfigError('configuration: TEMPORAL_TLS_KEY_PATH must be set when TEMPORAL_TLS_CERT_PATH is');
  }
  const codecKeys = keyring('PAYLOAD_CODEC', e.PAYLOAD_CODEC_KEY_ID, e.PAYLOAD_CODEC_KEY ?? DEVELOPMENT_CODEC_KEY, e.PAYLOAD_CODEC_PREVIOUS_KEYS);
  const pin = pinKeys(e);
  const signalMac = keyring('SIGNAL_MAC', e.SIGNAL_MAC_KEY_ID, e.SIGNAL_MAC_KEY ?? DEVELOPMENT_SIGNAL_MAC_KEY, e.SIGNAL_MAC_PREVIOUS_KEYS);
  assertKeysApart(codecKeys, signalMac, 'SIGNAL_MAC_KEY (or a SIGNAL_MAC_PREVIOUS_KEYS key)');
  if (pin.privateKey) assertKeysApart(codecKeys, { keyId: pin.keyId, key: pin.privateKey, previousKeys: pin.previousKeys }, 'PIN_SEAL_PRIVATE_KEY (or a PIN_SEAL_PREVIOUS_KEYS key)');
  return {
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      tls: e.TEMPORAL_TLS || Boolean(e.TEMPORAL_TLS_CERT_PATH) || Boolean(e.TEMPORAL_TLS_CA_PATH) || Boolean(e.TEMPORAL_API_KEY),
      tlsCertPath: e.TEMPORAL_TLS_CERT_PATH,
      tlsKeyPath: e.TEMPORAL_TLS_KEY_PATH,
      tlsCaPath: e.TEMPORAL_TLS_CA_PATH,
      tlsServerName: e.TEMPORAL_TLS_SERVER_NAME,
      apiKey: e.TEMPORAL_API_KEY,
      deploymentName: e.TEMPORAL_DEPLOYMENT_NAME,
      ...(e.TEMPORAL_WORKER_BUILD_ID ? { deployment: { name: e.TEMPORAL_DEPLOYMENT_NAME, buildId: e.TEMPORAL_WORKER_BUILD_ID, bootstrap: e.TEMPORAL_DEPLOYMENT_BOOTSTRAP } } : {}),
    },
    provider: {
      baseUrl: e.PROVIDER_BASE_URL.replace(/\/+$/, ''),
      apiKey: e.PROVIDER_API_KEY,
      apiSecret: e.PROVIDER_API_SECRET,
      webhookSecret: e.PROVIDER_WEBHOOK_SECRET ?? e.PROVIDER_API_SECRET,
      timeoutMs: e.PROVIDER_TIMEOUT_MS,
      rateWindowMs: e.PROVIDER_RATE_WINDOW_MS,
      reconcileBudgetShare: e.RECONCILE_BUDGET_SHARE,
      openItemMinAskMs: e.OPEN_ITEM_MIN_ASK_MS,
    },
    listenHost: e.LISTEN_HOST,
    sandbox: { port: e.SANDBOX_PORT, webhookUrl: e.SANDBOX_WEBHOOK_URL },
    bridge: { port: e.BRIDGE_PORT, signedPath: e.BRIDGE_SIGNED_PATH, timestampToleranceMs: e.BRIDGE_TIMESTAMP_TOLERANCE_MS },
    codec: {
      ...codecKeys,
      isDevelopmentKey: !e.PAYLOAD_CODEC_KEY,
      serverPort: e.CODEC_SERVER_PORT,
      allowedOrigins: e.CODEC_ALLOWED_ORIGINS,
      auth: codecAuth(e),
    },
    pin,
    cardActions: cardActionKeys(e),
    signalMac,
    retiredSettings: RETIRED_SETTINGS.filter((name) => Boolean(env[name])),
    logLevel: e.LOG_LEVEL,
    documentsDir: resolve(e.KYC_DOCUMENTS_DIR),
    metricsPort: e.METRICS_PORT,
    workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
    entityWorkflowCacheSize: e.ENTITY_WORKFLOW_CACHE_SIZE,
    tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT ? { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME } : undefined,
    schedules: e.SCHEDULES === 'on',
    nexus: { callers: nexusCallers(e) },
    development: e.CARD_ISSUING_DEVELOPMENT,
    developmentDefaults: developmentDefaults(env),
  };
}

/** NEXUS_CALLERS, or when unset none (no Nexus worker: fail closed), except development's one caller `dev` with every operation. */
function nexusCallers(e: Env): NexusCaller[] {
  if (e.NEXUS_CALLERS === undefined) return e.CARD_ISSUING_DEVELOPMENT ? [DEVELOPMENT_NEXUS_CALLER] : [];
  try {
    return parseNexusCallers(e.NEXUS_CALLERS, (path) => readFileSync(resolve(path), 'utf8'));
  } catch (err) {
    if (err instanceof NexusCallersError) throw new ConfigError(`configuration: NEXUS_CALLERS${err.at} ${err.rule}`);
    throw err;
  }
}

/**
 * Who may use the codec endpoint (codec/codec-auth.ts). Loopback mode (no token, no JWKS) decodes for
 * callers on this machine, and encodes for them only with CARD_ISSUING_DEVELOPMENT=true and the public
 * development payload key: what it seals, anyone could seal, so nothing it encodes is trusted elsewhere.
 */
function codecAuth(e: Env): CodecAuthConfig {
  if (!e.CODEC_AUTH_TOKEN && !e.CODEC_ENCODE_TOKEN && !e.CODEC_JWKS_URL) return { mode: 'loopback', encode: e.CARD_ISSUING_DEVELOPMENT && !e.PAYLOAD_CODEC_KEY };
  const jwks = e.CODEC_JWKS_URL
    ? { url: e.CODEC_JWKS_URL, issuer: e.CODEC_JWT_ISSUER!, audience: e.CODEC_JWT_AUDIENCE!, roleClaims: e.CODEC_JWT_ROLES_CLAIM, decodeRole: e.CODEC_DECODE_ROLE, encodeRole: e.CODEC_ENCODE_ROLE }
    : undefined;
  return { mode: 'bearer', token: e.CODEC_AUTH_TOKEN, encodeToken: e.CODEC_ENCODE_TOKEN, ...(jwks ? { jwks } : {}) };
}

/**
 * For entry points: the configuration, checked by each of `rules` (an entry point's own, such as
 * assertPinKeys); a bad value stops the program with one line on stderr and exit code 2.
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env, ...rules: Array<(config: Config) => unknown>): Config {
  try {
    const config = loadConfig(env);
    for (const rule of rules) rule(config);
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/** An empty variable means "use the default", as shells and compose files tend to export them. */
function stripEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}
