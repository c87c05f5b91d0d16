/**
 * Issue 50, "one credential per process": the bridge's credential cannot start a flow or poll.
 * Temporal's default authorizer cannot say so (a namespace writer starts and polls alike), so this
 * runs tools/temporal-authz, Temporal's server v1.29.1 with our authorizer and Temporal's default
 * JWT claim mapper, for real: SDK clients over gRPC, tokens signed here (ES256, jose) and checked
 * by the server against a JWKS file. Each process's role in `permissions` (`<namespace>:<role>`):
 * the bridge signals entity workflows through its own code (signalEntity, signalRunningEntity,
 * judgeLateEvent) for every entity kind, and is refused a start, a signal-with-start of another
 * type or on another queue, another signal, another query, a terminate and the polls; the worker
 * polls; a service starts but cannot poll or terminate; an operator terminates but cannot poll;
 * no token, another key's token, an expired one, another namespace's role or a standard
 * Temporal role: refused.
 * The server is built once per machine (tools/temporal-authz.ts: npm test's provisioning builds it,
 * else this file does on first use, under a minute after the Temporal CLI's build); without Go and
 * without the build these tests are skipped and say so.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { judgeLateEvent } from '../../src/bridge/late';
import { entityQueue } from '../../src/shared/entity-queues';
import { entityWorkflowId, type EntityKind } from '../../src/shared/ids';
import { entityEventQuery, providerEventSignal } from '../../src/shared/messages';
import type { ProviderEvent } from '../../src/shared/types';
import { signalEntity, signalRunningEntity } from '../../src/temporal/entity-signals';
import { ensureTemporalAuthz, startAuthzServer, temporalAuthzUnavailable, type AuthzServer } from '../../tools/temporal-authz';

const NAMESPACE = 'card-issuing-authz';
const TASK_QUEUE = 'card-issuing';
const ENTITIES = entityQueue(TASK_QUEUE);
/** Every entity kind (a Record, so a new kind fails to compile until listed): each is signalled by the bridge below. */
const KINDS: Record<EntityKind, true> = { card: true, kyc: true, esimOrder: true, esim: true, payout: true, unrouted: true };

const unavailable = temporalAuthzUnavailable();
if (unavailable) process.stderr.write(`temporal-authz: skipped, ${unavailable}\n`);
const describeIfBuilt = unavailable ? describe.skip : describe;

describeIfBuilt('Temporal with our authorizer: one credential per process', () => {
  let dir: string;
  let server: AuthzServer;
  let key: { privateKey: KeyLike; kid: string };
  const opened: Connection[] = [];

  const token = (permissions: string[], opts: { signWith?: KeyLike; expiresAt?: number } = {}) =>
    new SignJWT({ permissions })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid })
      .setSubject(`test-${permissions.join(',') || 'none'}`)
      .setIssuedAt()
      .setExpirationTime(opts.expiresAt ?? '10m')
      .sign(opts.signWith ?? key.privateKey);
  /** Lazy: a token the server refuses fails every call, GetSystemInfo (what connect() asks first) too. */
  const connect = (jwt?: string): Connection => {
    const connection = Connection.lazy({ address: server.address, ...(jwt ? { apiKey: jwt, tls: false } : {}) });
    opened.push(connection);
    return connection;
  };
  const clientOf = async (permissions?: string[]): Promise<Client> =>
    new Client({ connection: connect(permissions ? await token(permissions) : undefined), namespace: NAMESPACE });

  let bridge: Client;
  let worker: Client;
  let service: Client;
  let operator: Client;
  let anonymous: Client;

  beforeAll(async () => {
    const started = Date.now();
    const binary = await ensureTemporalAuthz();
    dir = mkdtempSync(join(tmpdir(), 'temporal-authz-test-'));
    const pair = await generateKeyPair('ES256');
    key = { privateKey: pair.privateKey, kid: `test-${randomUUID()}` };
    const jwksFile = join(dir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: key.kid, alg: 'ES256', use: 'sig' }] }));
    server = await startAuthzServer({ binary, dir, jwksUri: `file://${jwksFile}`, adminToken: await token(['temporal-system:admin']), namespaces: [NAMESPACE] });
    [bridge, worker, service, operator, anonymous] = await Promise.all([
      clientOf([`${NAMESPACE}:bridge`]),
      clientOf([`${NAMESPACE}:worker`]),
      clientOf([`${NAMESPACE}:service`]),
      clientOf([`${NAMESPACE}:operator`]),
      clientOf(),
    ]);
    process.stderr.write(`temporal-authz: ${binary} serving on ${server.address} after ${Date.now() - started} ms\n`);
  }, 900_000);

  afterAll(async () => {
    await Promise.all(opened.map((c) => c.close().catch(() => undefined)));
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const event = (): ProviderEvent => ({ eventId: `evt_${randomUUID()}`, eventType: 'card.status', createdAt: Date.now(), data: {} });
  const poll = (client: Client, kind: 'workflow' | 'activity', queue = ENTITIES) => {
    const request = { namespace: NAMESPACE, taskQueue: { name: queue }, identity: 'authz-test' };
    // A long poll needs a deadline; one allowed returns at once here, as the queue holds tasks.
    return client.connection.withDeadline(Date.now() + 20_000, async (): Promise<{ workflowType?: { name?: string | null } | null; taskToken?: Uint8Array | null }> =>
      kind === 'workflow' ? client.workflowService.pollWorkflowTaskQueue(request) : client.workflowService.pollActivityTaskQueue(request),
    );
  };
  const issueCard = (client: Client) =>
    client.workflow.start('issueCard', { workflowId: `issue/${randomUUID()}`, taskQueue: TASK_QUEUE, args: [{ cardholderId: 'ch_1' }] });

  it('the bridge signals (and signal-with-starts) every entity workflow on the entity queue, and queries them', async () => {
    for (const kind of Object.keys(KINDS) as EntityKind[]) {
      const entity = { kind, entityId: `x_${randomUUID()}` };
      expect(await signalEntity(bridge, TASK_QUEUE, entity, providerEventSignal, [event()])).toBe(entityWorkflowId(kind, entity.entityId));
      // A late delivery: to the running workflow only.
      await signalRunningEntity(bridge, TASK_QUEUE, entity, providerEventSignal, [event()]);
    }
    // The query before a late delivery passes authorization: no workflow for this entity, so "no-entity".
    expect(await judgeLateEvent(bridge, { kind: 'card', entityId: `none_${randomUUID()}` }, event())).toBe('no-entity');
  });

  it('the bridge cannot start a flow, start another type, use another queue, signal or query otherwise, terminate, or poll', async () => {
    const card = entityWorkflowId('card', `c_${randomUUID()}`);
    await denied(issueCard(bridge));
    // A start through signal-with-start: another type, or an entity type on another queue or under another ID.
    const sws = (workflowType: string, workflowId: string, taskQueue: string) =>
      bridge.workflow.signalWithStart(workflowType, { workflowId, taskQueue, args: [{}], signal: providerEventSignal, signalArgs: [event()] });
    await denied(sws('issueCard', card, ENTITIES));
    await denied(sws('cardLifecycle', card, TASK_QUEUE));
    await denied(sws('cardLifecycle', `issue/${randomUUID()}`, ENTITIES));
    await denied(sws('providerEntity', card, ENTITIES));
    await denied(bridge.workflow.signalWithStart('cardLifecycle', { workflowId: card, taskQueue: ENTITIES, args: [{}], signal: 'cancel', signalArgs: [] }));
    // The running entity workflow: another signal, another query, a terminate.
    await signalEntity(bridge, TASK_QUEUE, { kind: 'card', entityId: card.slice('card/'.length) }, providerEventSignal, [event()]);
    await denied(bridge.workflow.getHandle(card).signal('cancel'));
    await denied(bridge.workflow.getHandle(card).query('cardState'));
    await denied(bridge.workflow.getHandle(card).terminate('by the bridge'));
    await denied(bridge.workflow.getHandle(`issue/${randomUUID()}`).query(entityEventQuery, 'evt'));
    await denied(poll(bridge, 'workflow'));
    await denied(poll(bridge, 'activity', TASK_QUEUE));
  });

  it("the worker's credential polls: it receives the entity workflow's task the bridge's signal-with-start made", async () => {
    const card = { kind: 'card' as const, entityId: `w_${randomUUID()}` };
    await signalEntity(bridge, TASK_QUEUE, card, providerEventSignal, [event()]);
    const task = await poll(worker, 'workflow');
    expect(['cardLifecycle', 'providerEntity']).toContain(task.workflowType?.name);
    expect(task.taskToken?.length).toBeGreaterThan(0);
    await denied(worker.workflow.getHandle(entityWorkflowId(card.kind, card.entityId)).terminate('by a worker'));
  });

  it("a service's credential starts a flow but cannot poll or terminate; an operator's terminates it but cannot poll", async () => {
    const handle = await issueCard(service);
    expect((await handle.describe()).type).toBe('issueCard');
    await denied(poll(service, 'workflow', TASK_QUEUE));
    await denied(poll(service, 'activity', TASK_QUEUE));
    await denied(handle.terminate('by a service'));
    // An entity workflow is not a service's to cancel: its next run would forget the capabilities it spent.
    const card = { kind: 'card' as const, entityId: `s_${randomUUID()}` };
    await signalEntity(bridge, TASK_QUEUE, card, providerEventSignal, [event()]);
    await denied(service.workflow.getHandle(entityWorkflowId(card.kind, card.entityId)).cancel());
    await operator.workflow.getHandle(entityWorkflowId(card.kind, card.entityId)).cancel();
    // Its own flows it may cancel.
    await service.workflow.getHandle(handle.workflowId).cancel();
    await operator.workflow.getHandle(handle.workflowId).terminate('by an operator');
    expect((await operator.workflow.getHandle(handle.workflowId).describe()).status.name).toBe('TERMINATED');
    await denied(poll(operator, 'workflow', TASK_QUEUE));
  });

  it('no token, or a token this server cannot accept, is refused; the health check stays open', async () => {
    await anonymous.workflowService.getSystemInfo({});
    await denied(issueCard(anonymous));
    await denied(signalEntity(anonymous, TASK_QUEUE, { kind: 'card', entityId: `a_${randomUUID()}` }, providerEventSignal, [event()]));
    await denied(poll(anonymous, 'workflow'));
    const stranger = (await generateKeyPair('ES256')).privateKey;
    const refused = [
      await token([`${NAMESPACE}:service`], { signWith: stranger }), // another key, under our kid
      await token([`${NAMESPACE}:service`], { expiresAt: Math.floor(Date.now() / 1000) - 60 }), // expired
      await token(['other-namespace:service']), // another namespace's role
      await token([`${NAMESPACE}:write`, `${NAMESPACE}:read`]), // Temporal's standard roles: not ours
      await token([]),
    ];
    for (const jwt of refused) {
      const client = new Client({ connection: connect(jwt), namespace: NAMESPACE });
      await denied(issueCard(client));
      await denied(poll(client, 'workflow'));
    }
  });
});

/** Resolves when `call` was refused with PERMISSION_DENIED (the client's errors carry the gRPC error as a cause). */
async function denied(call: Promise<unknown>): Promise<void> {
  let outcome: unknown;
  try {
    await call;
  } catch (err) {
    outcome = err;
  }
  if (outcome === undefined) throw new Error('the call was allowed');
  expect(grpcCode(outcome)).toBe(status.PERMISSION_DENIED);
}

function grpcCode(err: unknown): number | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'number') return e.code;
  }
  return undefined;
}
