/**
 * The Nexus endpoint other namespaces call our service through (docs/nexus.md): a cluster-wide
 * name that routes to our namespace and our Nexus queue (shared/task-queues.ts nexusQueue). Made or
 * corrected once per cluster by `nexus-endpoint` (the CLI), the demo and the chart's Job; what
 * `temporal operator nexus endpoint create` does by hand.
 */
import type { Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';

/** The endpoint name callers use unless told another (NEXUS_ENDPOINT). */
export const DEFAULT_NEXUS_ENDPOINT = 'card-issuing';
/** The namespace our tooling (the dev server, the cluster scripts) makes for trying a caller in (README, "Calling from another namespace"). */
export const CALLERS_NAMESPACE = 'callers';
/** What the server accepts as an endpoint name (and Temporal Cloud too). */
export const NEXUS_ENDPOINT_NAME = /^[a-zA-Z][a-zA-Z0-9-]{0,198}[a-zA-Z0-9]$/;

export interface NexusEndpointTarget {
  name: string;
  namespace: string;
  taskQueue: string;
}

export type EndpointOutcome = 'created' | 'updated' | 'kept';

const DESCRIPTION = 'The card-issuing service `cardIssuing`: issueCard, fundCard, withdrawFromCard, purchaseEsim, rechargeEsim, sendPayout, onboardCardholder, cardState, walletBalance. Money operations take the caller\'s idempotency key.';

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
    description: defaultPayloadConverter.toPayload(DESCRIPTION),
    target: { worker: { namespace: target.namespace, taskQueue: target.taskQueue } },
  };
  for (let attempt = 0; ; attempt++) {
    const existing = (await connection.operatorService.listNexusEndpoints({ name: target.name, pageSize: 1 })).endpoints?.[0];
    try {
      if (!existing) {
        await connection.operatorService.createNexusEndpoint({ spec });
        return 'created';
      }
      const worker = existing.spec?.target?.worker;
      if (worker?.namespace === target.namespace && worker.taskQueue === target.taskQueue) return 'kept';
      // Endpoints are cluster-wide: one of that name routing elsewhere may be another deployment's (staging beside production).
      if (!opts.takeOver) throw new EndpointTaken(`Nexus endpoint ${target.name} routes to ${worker ? `namespace ${worker.namespace}, task queue ${worker.taskQueue}` : 'a target outside this cluster'}, not here (${target.namespace}, ${target.taskQueue}): nothing changed. Choose another name, or take it over on purpose (--take-over)`);
      await connection.operatorService.updateNexusEndpoint({ id: existing.id, version: existing.version, spec });
      return 'updated';
    } catch (err) {
      // ALREADY_EXISTS or FAILED_PRECONDITION (its version moved): another process came first; look again.
      const code = (err as { code?: number }).code;
      if (attempt >= 3 || (code !== 6 && code !== 9)) throw err;
    }
  }
}
