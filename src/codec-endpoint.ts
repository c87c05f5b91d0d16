/**
 * Codec server entry point: lets the Temporal UI and CLI decrypt history locally.
 * Point the UI at it with `temporal server start-dev --ui-codec-endpoint http://127.0.0.1:4030`.
 */
import { assertCodecEndpointAuth, loadConfigOrExit, requireSecrets } from './config';
import { processLogger } from './logging';
import { createCodecAuthorizer } from './codec/codec-auth';
import { startCodecServer } from './codec/codec-server';
import { createPayloadCodec } from './codec/payload-codec';

async function run(): Promise<void> {
  const config = loadConfigOrExit(process.env, requireSecrets('PAYLOAD_CODEC_KEY'), (c) => assertCodecEndpointAuth(c));
  const log = processLogger('codec', config);
  if (config.codec.isDevelopmentKey) log.warn('PAYLOAD_CODEC_KEY is not set; using the public development key (loopback callers only)');
  const server = await startCodecServer({
    port: config.codec.serverPort,
    host: config.listenHost,
    codec: createPayloadCodec(config.codec),
    allowedOrigins: config.codec.allowedOrigins,
    auth: createCodecAuthorizer(config.codec.auth),
  });
  log.info('codec endpoint listening', { url: server.url, keyId: config.codec.keyId, auth: config.codec.auth.mode });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void server.close().then(() => process.exit(0)));
  }
}

run().catch((err: unknown) => {
  process.stderr.write(`codec server: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
