/**
 * The Nexus endpoints other namespaces call our service through (docs/nexus.md): one per caller
 * (NEXUS_CALLERS), a cluster-wide name `<base>-<caller>` that routes to our namespace and that
 * caller's Nexus queue (shared/task-queues.ts nexusCallerQueue). Made or corrected once per cluster
 * by `nexus-endpoint` (the CLI), the demo and the chart's Job; what `temporal operator nexus endpoint
 * create` does by hand.
 */
import type { Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { NexusCaller } from '../nexus/callers';
import { callerEndpointName, nexusCallerQueue } from '../shared/task-queues';

/** The base of the endpoints' names unless told another (`nexus-endpoint --name`): caller `team-a`'s is `card-issuing-team-a`. */
export const DEFAULT_NEXUS_ENDPOINT = 'card-issuing';
/** The namespace our tooling (the dev server, the cluster scripts) makes for trying a caller in (README, "Calling from another namespace"). */
export const CALLERS_NAMESPACE = 'callers';
/** What the server accepts as an endpoint name (and Temporal Cloud too). */
export const NEXUS_ENDPOINT_NAME = /^[a-zA-Z][a-zA-Z0-9-]{0,198}[a-zA-Z0-9]$/;

export interface NexusEndpointTarget {
  name: string;
  namespace: string;
  taskQueue: string;
  /** The caller it is for (its name and namespace), said in the endpoint's description. */
  caller?: { name: string; namespace: string };
}

export type EndpointOutcome = 'created' | 'updated' | 'kept';

/** The endpoint of each caller: `<base>-<name>`, routed to `namespace` (ours) and the caller's queue under `mainQueue`. */
export function callerEndpoints(base: string, namespace: string, mainQueue: string, callers: readonly NexusCaller[]): NexusEndpointTarget[] {
  return callers.map((caller) => ({ name: callerEndpointName(base, caller), namespace, taskQueue: nexusCallerQueue(mainQueue, caller.name), caller: { name: caller.name, namespace: caller.namespace } }));
}

const DESCRIPTION = 'The card-issuing service `cardIssuing`: issueCard, fundCard, withdrawFromCard, purchaseEsim, rechargeEsim, sendPayout, onboardCardholder, onboarding, cardState, walletBalance. Money operations take the caller\'s idempotency key.';

function descriptionOf(target: NexusEndpointTarget): string {
  if (!target.caller) return DESCRIPTION;
  return `${DESCRIPTION} For caller ${target.caller.name} (namespace ${target.caller.namespace}) only: allow no other namespace to call it (docs/nexus.md, "Who can call").`;
}

/** An endpoint of that name routes elsewhere and was not taken over: nothing changed. */
export class EndpointTaken extends Error {
  readonly type = 'NexusEndpointTaken';
}

/**
 * Creates the endpoint, or keeps it when it routes to `target` already; one routing elsewhere is
 * repointed only with `takeOver` (EndpointTaken otherwise). Another process making it at the same
 * moment is no failure.
 */
export async function ensureNexusEndpoint(connection: Connection, target: NexusEndpointTarget, opts: { takeOver?: boolean } = {}): Promise<EndpointOutcome> {
  if (!NEXUS_ENDPOINT_NAME.test(target.name)) throw new Error(`Nexus endpoint name "${target.name}" must start with a letter, end with a letter or digit, and hold only letters, digits and "-" (2-200 characters)`);
  const spec = {
    name: target.name,
    description: defaultPayloadConverter.toPayload(descriptionOf(target)),
    target: { worker: { namespace: target.namespace, taskQueue: target.taskQueue } },
  };
  for (let attempt = 0; ; attempt++) {
    const existing = await endpointNamed(connection, target.name);
    try {
      if (!existing) {
        await connection.operatorService.createNexusEndpoint({ spec });
        return 'created';
      }
      if (routesTo(existing, target)) return 'kept';
      // Endpoints are cluster-wide: one of that name routing elsewhere may be another deployment's (staging beside production).
      if (!opts.takeOver) throw takenBy(existing, target);
      await connection.operatorService.updateNexusEndpoint({ id: existing.id, version: existing.version, spec });
      return 'updated';
    } catch (err) {
      // ALREADY_EXISTS or FAILED_PRECONDITION (its version moved): another process came first; look again.
      const code = (err as { code?: number }).code;
      if (attempt >= 3 || (code !== 6 && code !== 9)) throw err;
    }
  }
}

/**
 * ensureNexusEndpoint for each of `targets` (one per caller). One that routes elsewhere, without
 * `takeOver`, refuses them all before any is made or changed (EndpointTaken naming each).
 */
export async function ensureNexusEndpoints(connection: Connection, targets: NexusEndpointTarget[], opts: { takeOver?: boolean } = {}): Promise<EndpointOutcome[]> {
  for (const target of targets) {
    if (!NEXUS_ENDPOINT_NAME.test(target.name)) throw new Error(`Nexus endpoint name "${target.name}" must start with a letter, end with a letter or digit, and hold only letters, digits and "-" (2-200 characters)`);
  }
  if (!opts.takeOver) {
    const taken: string[] = [];
    for (const target of targets) {
      const existing = await endpointNamed(connection, target.name);
      if (existing && !routesTo(existing, target)) taken.push(takenBy(existing, target).message);
    }
    if (taken.length > 0) throw new EndpointTaken(taken.join('; '));
  }
  const outcomes: EndpointOutcome[] = [];
  for (const target of targets) outcomes.push(await ensureNexusEndpoint(connection, target, opts));
  return outcomes;
}

type Endpoint = NonNullable<Awaited<ReturnType<Connection['operatorService']['listNexusEndpoints']>>['endpoints']>[number];

async function endpointNamed(connection: Connection, name: string): Promise<Endpoint | undefined> {
  return (await connection.operatorService.listNexusEndpoints({ name, pageSize: 1 })).endpoints?.[0];
}

function routesTo(existing: Endpoint, target: NexusEndpointTarget): boolean {
  const worker = existing.spec?.target?.worker;
  return worker?.namespace === target.namespace && worker.taskQueue === target.taskQueue;
}

function takenBy(existing: Endpoint, target: NexusEndpointTarget): EndpointTaken {
  const worker = existing.spec?.target?.worker;
  return new EndpointTaken(`Nexus endpoint ${target.name} routes to ${worker ? `namespace ${worker.namespace}, task queue ${worker.taskQueue}` : 'a target outside this cluster'}, not here (${target.namespace}, ${target.taskQueue}): nothing changed. Choose another name, or take it over on purpose (--take-over)`);
}
