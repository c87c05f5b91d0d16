/** Wallet balance and the operation lookup by idempotency key. */
import { IDEMPOTENCY_KEY_PATTERN } from '../../provider-api';
import type { ApiHandlers } from '../api';
import { notFound, ok, validationFailed } from '../errors';
import { WALLET } from '../ledger';

export const walletRoutes = {
  getWalletBalance: (call) => ok({ availableBalance: call.sandbox.ledger.balance(WALLET), currency: 'USD' as const }),

  getOperation: (call) => {
    const key = call.params.idempotencyKey;
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw validationFailed({ idempotencyKey: 'must be 1-64 characters of [a-zA-Z0-9_-]' });
    const sb = call.sandbox;
    const op = sb.idempotency.operation(key);
    // The read side may not see a record younger than readLagMs yet (read-after-write lag).
    if (!op || sb.now() - op.createdAt < sb.config.readLagMs) throw notFound('operation');
    const fee = sb.config.operationRecordFeeCents;
    return ok(fee > 0 && typeof op.amount === 'number' ? { ...op, amount: op.amount + fee } : op);
  },
} satisfies Partial<ApiHandlers>;
