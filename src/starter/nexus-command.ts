/**
 * `nexus-endpoint [--name NAME] [--take-over]` (docs/nexus.md): makes the Nexus endpoint other
 * namespaces call our service `cardIssuing` through (temporal/nexus-endpoint.ts). One of that name
 * routing elsewhere is refused (exit 1 NexusEndpointTaken) unless taken over on purpose. Run once
 * per cluster by the operator, the demo and the chart's Job; running it again changes nothing. It
 * sends no payload of ours, so it needs no payload key (cli.ts).
 */
import type { Connection } from '@temporalio/client';
import { DEFAULT_NEXUS_ENDPOINT, EndpointTaken, NEXUS_ENDPOINT_NAME, ensureNexusEndpoint } from '../temporal/nexus-endpoint';
import { nexusQueue } from '../shared/task-queues';
import { UsageError, flag } from './args';
import { bool, str, type Command } from './command-kit';

const nexusEndpoint: Command<{ name: string; takeOver: boolean }> = {
  usage: `nexus-endpoint [--name NAME] [--take-over]   (default ${DEFAULT_NEXUS_ENDPOINT}; an endpoint of that name routing elsewhere is refused, exit 1, unless --take-over)`,
  options: { name: str, 'take-over': bool },
  parse(flags) {
    const name = flag(flags, 'name') ?? DEFAULT_NEXUS_ENDPOINT;
    if (!NEXUS_ENDPOINT_NAME.test(name)) throw new UsageError(`--name must be a Nexus endpoint name: 2-200 letters, digits and "-", starting with a letter and ending with a letter or digit (got "${name}")`);
    return { name, takeOver: flags['take-over'] === true };
  },
  async run({ name, takeOver }, ctx) {
    const { client, taskQueue: mainQueue } = (await ctx.client()).temporal;
    const target = { name, namespace: client.options.namespace, taskQueue: nexusQueue(mainQueue) };
    const outcome = await ensureNexusEndpoint(client.connection as Connection, target, { takeOver }).catch((err: unknown) => {
      if (err instanceof EndpointTaken) return err;
      throw err;
    });
    if (outcome instanceof EndpointTaken) return { ok: false, result: target, failure: { type: outcome.type, message: outcome.message } };
    ctx.progress(`Nexus endpoint ${name} ${outcome === 'kept' ? 'already routes' : outcome === 'created' ? 'created: it routes' : 'updated: it now routes'} to namespace ${target.namespace}, task queue ${target.taskQueue}`);
    return { ok: true, result: { ...target, outcome } };
  },
};

export const NEXUS_COMMANDS: Record<string, Command> = { 'nexus-endpoint': nexusEndpoint as Command };
