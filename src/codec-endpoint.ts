/**
 * Codec server entry point: lets the Temporal UI and CLI decrypt history locally.
 * Point the UI at it with `temporal server start-dev --ui-codec-endpoint http://127.0.0.1:4030`.
 */
import { assertCodecEndpointAuth, loadConfigOrExit, requireSecrets } from './config';
import { createLogger } from './logging';
import { createCodecAuthorizer } from './codec/codec-auth';
import { startCodecServer } from './codec/codec-server';
import { createPayloadCodec } from './codec/payload-codec';

async function run(): Promise<void> {
  const config = loadConfigOrExit(process.env, requireSecrets('PAYLOAD_CODEC_KEY'), (c) => assertCodecEndpointAuth(c));
  const { auth } = config.codec;
  // The process's lines and the endpoint's audit lines (one per /decode and /encode, PCI DSS 10.2:
  // codec-server.ts) on one logger, which scrubs every secret this process holds wherever it appears.
  const tokens = auth.mode === 'bearer' ? [auth.token, auth.encodeToken].filter((t): t is string => t !== undefined) : [];
  const log = createLogger('codec', {
    level: config.logLevel,
    secrets: [config.provider.apiSecret, config.provider.webhookSecret, config.codec.key, ...Object.values(config.codec.previousKeys ?? {}), ...tokens],
  });
  if (config.codec.isDevelopmentKey) log.warn('PAYLOAD_CODEC_KEY is not set; using the public development key (loopback callers only)');
  const server = await startCodecServer({
    port: config.codec.serverPort,
    host: config.listenHost,
    codec: createPayloadCodec(config.codec),
    allowedOrigins: config.codec.allowedOrigins,
    auth: createCodecAuthorizer(auth),
    logger: log,
  });
  const grants =
    auth.mode === 'loopback'
      ? { auth: 'loopback', encode: auth.encode === true }
      : { auth: 'bearer', decodeToken: auth.token !== undefined, encodeToken: auth.encodeToken !== undefined, ...(auth.jwks ? { jwtRoleClaims: auth.jwks.roleClaims, decodeRole: auth.jwks.decodeRole, encodeRole: auth.jwks.encodeRole } : {}) };
  log.info('codec endpoint listening', { url: server.url, keyId: config.codec.keyId, ...grants });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void server.close().then(() => process.exit(0)));
  }
}

run().catch((err: unknown) => {
  process.stderr.write(`codec server: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
