/**
 * X-Idempotency-Key handling shared by every idempotent endpoint (spec: Idempotency).
 * Keys share one namespace per project, so GET /operations/{key} can find any of them.
 * The key is claimed synchronously (no await between lookup and claim), which is what makes
 * concurrent requests with one key safe in a single-threaded server.
 */
import { createHash } from 'node:crypto';
import type { Operation, OperationType } from '../provider-api';
import { ApiError, type ApiResult } from './errors';
import { newId } from './ids';
import { canonicalJson } from '../shared/canonical-json';

/** What happens to the key when the call fails with a business error (422 and the like). */
export type FailurePolicy = 'release' | 'terminal';

export interface IdempotencyRule {
  failure: FailurePolicy;
  /** Successful answers are kept this long (POST /cards: 24 h); undefined: forever. */
  ttlMs?: number;
  /** The Operation type recorded for GET /operations, when the endpoint has one. */
  operationType?: OperationType;
}

interface KeyRecord {
  key: string;
  endpointKey: string;
  /** The cardId (or other path scope) the key was first used with. */
  scope: string;
  bodyHash: string;
  state: 'IN_PROGRESS' | 'DONE';
  rule: IdempotencyRule;
  expiresAt?: number;
  /** The first answer; replays return it, or the resource's current form via `replay`. */
  answer?: ApiResult;
  replay?: () => ApiResult;
  operation?: Operation;
}

/** Handle given to the route while it runs under a claimed key. */
export interface KeyHandle {
  readonly key: string;
  readonly operationId?: string;
  /** Adds details (cardId, amount, orderNo) to the Operation record. */
  describe(patch: Partial<Pick<Operation, 'cardId' | 'amount' | 'orderNo'>>): void;
  /** Answer replays with the resource's current state instead of the first answer. */
  replayWith(fn: () => ApiResult): void;
  /** Leaves the Operation PROCESSING after the answer (it finishes later via settle()). */
  keepProcessing(): void;
}

export function hashBody(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body ?? null)).digest('hex');
}


export class IdempotencyStore {
  readonly #records = new Map<string, KeyRecord>();
  constructor(private readonly now: () => number) {}

  /**
   * Runs `run` at most once per key: a replay answers from the record; a conflicting,
   * in-progress or terminal key throws the 409 that says so.
   */
  async execute(
    req: { key: string | undefined; endpointKey: string; scope?: string; body: unknown; rule: IdempotencyRule },
    run: (handle: KeyHandle | undefined) => Promise<ApiResult>,
  ): Promise<ApiResult> {
    if (req.key === undefined) return run(undefined);
    const scope = req.scope ?? '';
    const bodyHash = hashBody(req.body);
    const existing = this.#live(req.key);
    if (existing) return this.#answerExisting(existing, req.endpointKey, scope, bodyHash);

    // Claimed before any await.
    const record: KeyRecord = { key: req.key, endpointKey: req.endpointKey, scope, bodyHash, state: 'IN_PROGRESS', rule: req.rule };
    if (req.rule.operationType) {
      const at = this.now();
      record.operation = { idempotencyKey: req.key, operationId: newId('oaop'), type: req.rule.operationType, status: 'PROCESSING', createdAt: at, updatedAt: at };
    }
    this.#records.set(req.key, record);
    let keepProcessing = false;
    const handle: KeyHandle = {
      key: req.key,
      operationId: record.operation?.operationId,
      describe: (patch) => {
        if (record.operation) Object.assign(record.operation, patch, { updatedAt: this.now() });
      },
      replayWith: (fn) => {
        record.replay = fn;
      },
      keepProcessing: () => {
        keepProcessing = true;
      },
    };
    try {
      const answer = await run(handle);
      record.state = 'DONE';
      record.answer = answer;
      if (req.rule.ttlMs !== undefined) record.expiresAt = this.now() + req.rule.ttlMs;
      if (!keepProcessing) this.settle(req.key, 'COMPLETED');
      return answer;
    } catch (err) {
      const business = err instanceof ApiError && err.status === 422;
      if (business && req.rule.failure === 'terminal') {
        record.state = 'DONE';
        this.settle(req.key, 'FAILED', err.code);
      } else {
        // A failed POST /cards, or an unexpected error before any side effect: the key is free again.
        this.#records.delete(req.key);
      }
      throw err;
    }
  }

  /** Finishes the Operation of a key (e.g. when an eSIM order is issued or refunded later). */
  settle(key: string, status: 'COMPLETED' | 'FAILED', failureReason?: string): void {
    const op = this.#records.get(key)?.operation;
    if (!op || op.status !== 'PROCESSING') return;
    op.status = status;
    if (failureReason) op.failureReason = failureReason;
    op.updatedAt = this.now();
  }

  /** Control API: a FAILED operation completes after all (the caller moves its money). */
  complete(key: string): void {
    const op = this.#records.get(key)?.operation;
    if (!op || op.status !== 'FAILED') return;
    op.status = 'COMPLETED';
    delete op.failureReason;
    op.updatedAt = this.now();
  }

  operation(key: string): Operation | undefined {
    const op = this.#live(key)?.operation;
    return op ? { ...op } : undefined;
  }

  #live(key: string): KeyRecord | undefined {
    const record = this.#records.get(key);
    if (record?.expiresAt !== undefined && record.expiresAt <= this.now()) {
      this.#records.delete(key);
      return undefined;
    }
    return record;
  }

  #answerExisting(record: KeyRecord, endpointKey: string, scope: string, bodyHash: string): ApiResult {
    if (record.endpointKey !== endpointKey) throw new ApiError('IDEMPOTENCY_CONFLICT', 'key was used on a different endpoint');
    if (record.scope !== scope) throw new ApiError('IDEMPOTENCY_CONFLICT', 'key was used with a different cardId');
    if (record.bodyHash !== bodyHash) throw new ApiError('IDEMPOTENCY_CONFLICT', 'key was used with a different body');
    if (record.state === 'IN_PROGRESS') throw new ApiError('IDEMPOTENCY_IN_PROGRESS', 'the first request with this key is still processing; retry shortly');
    if (record.rule.failure === 'terminal' && record.operation?.status === 'FAILED') {
      throw new ApiError('IDEMPOTENCY_KEY_TERMINAL', 'the request with this key definitively failed; use a new key');
    }
    return record.replay ? record.replay() : record.answer!;
  }
}
