/**
 * `npm run temporal`: the dev server in the foreground, state in .data/temporal.db, the UI on
 * 127.0.0.1:8233 with our search attributes registered and the payload codec endpoint configured.
 */
import { join } from 'node:path';
import { loadConfigOrExit } from '../src/config';
import { ensureTemporalCli } from './temporal-cli';
import { startDevServer } from './dev-server';
import { createPayloadCodec } from '../src/codec/payload-codec';
import { startCodecServer } from '../src/codec/codec-server';
import { createCodecAuthorizer } from '../src/codec/codec-auth';
import { createLogger } from '../src/logging';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const cliPath = await ensureTemporalCli(config.temporal.cliPath);
  // The configuration's grants (loopback: /encode only with CARD_ISSUING_DEVELOPMENT=true and the
  // development payload key, so the UI can start and signal with input), every access audited.
  const { auth } = config.codec;
  const tokens = auth.mode === 'bearer' ? [auth.token, auth.encodeToken].filter((t): t is string => t !== undefined) : [];
  const logger = createLogger('codec', { level: config.logLevel, secrets: [config.provider.apiSecret, config.provider.webhookSecret, config.codec.key, ...Object.values(config.codec.previousKeys ?? {}), ...tokens] });
  const codecServer = await startCodecServer({ port: config.codec.serverPort, codec: createPayloadCodec(config.codec), auth: createCodecAuthorizer(auth), logger });
  const [ip, port] = config.temporal.address.split(':');
  const server = await startDevServer({
    cliPath,
    ip,
    port: Number(port),
    uiPort: 8233,
    dbFile: join(process.cwd(), '.data', 'temporal.db'),
    namespace: config.temporal.namespace,
    codecEndpoint: codecServer.url,
    stdio: 'inherit',
  });
  process.stderr.write(`Temporal dev server on ${server.address}, UI at ${server.uiUrl}, codec endpoint ${codecServer.url}\n`);
  const stop = async () => {
    await server.stop();
    await codecServer.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  server.process.once('exit', (code) => process.exit(code ?? 1));
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
