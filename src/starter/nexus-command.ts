/**
 * `nexus-endpoint [--name NAME]` (docs/nexus.md): makes the Nexus endpoint other namespaces call our
 * service `cardIssuing` through, or points the one of that name at this deployment's namespace and
 * Nexus queue (temporal/nexus-endpoint.ts). Run once per cluster by the operator, the demo and the
 * chart's Job; running it again changes nothing.
 */
import type { Connection } from '@temporalio/client';
import { DEFAULT_NEXUS_ENDPOINT, NEXUS_ENDPOINT_NAME, ensureNexusEndpoint } from '../temporal/nexus-endpoint';
import { nexusQueue } from '../shared/task-queues';
import { UsageError, flag } from './args';
import { str, type Command } from './command-kit';

const nexusEndpoint: Command<{ name: string }> = {
  usage: `nexus-endpoint [--name NAME]   (default ${DEFAULT_NEXUS_ENDPOINT})`,
  options: { name: str },
  parse(flags) {
    const name = flag(flags, 'name') ?? DEFAULT_NEXUS_ENDPOINT;
    if (!NEXUS_ENDPOINT_NAME.test(name)) throw new UsageError(`--name must be a Nexus endpoint name: 2-200 letters, digits and "-", starting with a letter and ending with a letter or digit (got "${name}")`);
    return { name };
  },
  async run({ name }, ctx) {
    const { client, taskQueue: mainQueue } = (await ctx.client()).temporal;
    const target = { name, namespace: client.options.namespace, taskQueue: nexusQueue(mainQueue) };
    const outcome = await ensureNexusEndpoint(client.connection as Connection, target);
    ctx.progress(`Nexus endpoint ${name} ${outcome === 'kept' ? 'already routes' : outcome === 'created' ? 'created: it routes' : 'updated: it now routes'} to namespace ${target.namespace}, task queue ${target.taskQueue}`);
    return { ok: true, result: { ...target, outcome } };
  },
};

export const NEXUS_COMMANDS: Record<string, Command> = { 'nexus-endpoint': nexusEndpoint as Command };
