/** `npm run sandbox`: the provider sandbox in the foreground on 127.0.0.1. */
import { loadConfigOrExit } from '../config';
import { processLogger } from '../logging';
import { startSandbox } from './index';

async function run(): Promise<void> {
  const config = loadConfigOrExit();
  const log = processLogger('sandbox', config);
  const sandbox = await startSandbox({
    port: config.sandbox.port,
    host: config.listenHost,
    apiKey: config.provider.apiKey,
    apiSecret: config.provider.apiSecret,
    webhookSecret: config.provider.webhookSecret,
    webhookUrl: config.sandbox.webhookUrl,
  });
  log.info('provider sandbox listening', { url: sandbox.url, api: `${sandbox.url}/open-api/v1`, control: `${sandbox.url}/sandbox`, webhooks: config.sandbox.webhookUrl });
  const stop = () => {
    sandbox.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

run().catch((err) => {
  process.stderr.write(`sandbox failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
