// Boot: configuration read once (the package's optionsFromEnv, and PORT), one Temporal connection
// for the process, a graceful close on SIGTERM/SIGINT. Everything else is in app.js.
import { createServer } from 'node:http';
import { connectCardIssuingClient, optionsFromEnv } from '@card-issuing/client';
import { createApp } from './app.js';

async function run() {
  const options = optionsFromEnv(process.env); // TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE, PAYLOAD_CODEC_KEY(_ID), …
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('PORT must be a port number (0: any free port)');

  const client = await connectCardIssuingClient(options);
  const server = createServer(createApp({ client }));
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  console.log(JSON.stringify({ msg: 'listening', port: server.address().port, taskQueue: options.taskQueue }));

  const close = async () => {
    await new Promise((resolve) => server.close(resolve));
    await client.close();
  };
  process.once('SIGTERM', () => close().then(() => process.exit(0), exit));
  process.once('SIGINT', () => close().then(() => process.exit(0), exit));
}

function exit(err) {
  console.error(err);
  process.exit(1);
}

run().catch(exit);
