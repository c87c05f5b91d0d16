/**
 * The caller's worker, on its own: polls the caller's task queue in the caller's namespace and runs
 * workflows.ts, which call our Nexus service through an endpoint (README in this folder). Nothing of
 * ours is needed here but the endpoint's name: no payload key, no access to our namespace.
 *
 *   npx tsx examples/nexus-caller-ts/worker.ts [--address 127.0.0.1:7233] [--namespace callers] [--task-queue callers-ts]
 */
import { parseArgs } from 'node:util';
import { NativeConnection, Worker } from '@temporalio/worker';

async function run(): Promise<void> {
  const { values } = parseArgs({ options: { address: { type: 'string', default: '127.0.0.1:7233' }, namespace: { type: 'string', default: 'callers' }, 'task-queue': { type: 'string', default: 'callers-ts' } } });
  const connection = await NativeConnection.connect({ address: values.address });
  const worker = await Worker.create({ connection, namespace: values.namespace, taskQueue: values['task-queue'], workflowsPath: require.resolve('./workflows') });
  console.log(`caller worker polling ${values['task-queue']} in namespace ${values.namespace}`);
  await worker.run(); // until SIGINT or SIGTERM, which the worker handles itself
  await connection.close();
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
