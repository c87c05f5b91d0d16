/**
 * `nexus-endpoint [--name NAME] [--take-over]` (docs/nexus.md): makes the Nexus endpoints other
 * namespaces call our service `cardIssuing` through (temporal/nexus-endpoint.ts), one per caller of
 * NEXUS_CALLERS: `<NAME>-<caller>`, routed to that caller's queue. One of those names routing
 * elsewhere is refused (exit 1 NexusEndpointTaken, none made or changed) unless taken over on purpose.
 * Run once per cluster (and again when NEXUS_CALLERS gains a caller) by the operator, the demo and the
 * chart's Job; running it again changes nothing. It sends no payload of ours, so it needs no payload
 * key (cli.ts); without callers (NEXUS_CALLERS unset outside development) it has nothing to make.
 */
import type { Connection } from '@temporalio/client';
import { DEFAULT_NEXUS_ENDPOINT, EndpointTaken, NEXUS_ENDPOINT_NAME, callerEndpoints, ensureNexusEndpoints } from '../temporal/nexus-endpoint';
import { callerEndpointName } from '../nexus/callers';
import { UsageError, flag } from './args';
import { bool, str, type Command } from './command-kit';

const nexusEndpoint: Command<{ name: string; takeOver: boolean }> = {
  usage: `nexus-endpoint [--name NAME] [--take-over]   (one endpoint per caller of NEXUS_CALLERS, NAME-<caller>, default NAME ${DEFAULT_NEXUS_ENDPOINT}; one of those routing elsewhere is refused, exit 1, unless --take-over)`,
  description: 'Make the Nexus endpoints other namespaces call us through, one per caller of NEXUS_CALLERS; running it again changes nothing.',
  example: 'nexus-endpoint --name card-issuing',
  options: { name: str, 'take-over': bool },
  parse(flags, _positional, ctx) {
    const name = flag(flags, 'name') ?? DEFAULT_NEXUS_ENDPOINT;
    const callers = ctx.config().nexus.callers;
    if (callers.length === 0) throw new UsageError('NEXUS_CALLERS names no caller: there is no endpoint to make (each caller has its own; docs/nexus.md, "Who can call")');
    for (const caller of callers) {
      const endpoint = callerEndpointName(name, caller);
      if (!NEXUS_ENDPOINT_NAME.test(endpoint)) throw new UsageError(`--name must make Nexus endpoint names with each caller's name (${endpoint}): 2-200 letters, digits and "-", starting with a letter and ending with a letter or digit (got "${name}")`);
    }
    return { name, takeOver: flags['take-over'] === true };
  },
  async run({ name, takeOver }, ctx) {
    const { client, taskQueue: mainQueue } = (await ctx.client()).temporal;
    const targets = callerEndpoints(name, client.options.namespace, mainQueue, ctx.config().nexus.callers);
    const outcomes = await ensureNexusEndpoints(client.connection as Connection, targets, { takeOver }).catch((err: unknown) => {
      if (err instanceof EndpointTaken) return err;
      throw err;
    });
    const endpoints = targets.map(({ caller, ...target }) => ({ ...target, caller: caller!.name, callerNamespace: caller!.namespace }));
    if (outcomes instanceof EndpointTaken) return { ok: false, result: { endpoints }, failure: { type: outcomes.type, message: outcomes.message } };
    endpoints.forEach((target, i) => {
      const outcome = outcomes[i];
      ctx.progress(
        `Nexus endpoint ${target.name} (caller ${target.caller}, namespace ${target.callerNamespace}) ${outcome === 'kept' ? 'already routes' : outcome === 'created' ? 'created: it routes' : 'updated: it now routes'} to namespace ${target.namespace}, task queue ${target.taskQueue}`,
      );
    });
    return { ok: true, result: { endpoints: endpoints.map((target, i) => ({ ...target, outcome: outcomes[i] })) } };
  },
};

export const NEXUS_COMMANDS: Record<string, Command> = { 'nexus-endpoint': nexusEndpoint as Command };
