/** Wallet balance and the operation lookup by idempotency key. */
import { IDEMPOTENCY_KEY_PATTERN } from '../../provider/api';
import type { ApiHandlers } from '../api';
import { notFound, ok, validationFailed } from '../errors';
import { WALLET } from '../ledger';

export const walletRoutes = {
  getWalletBalance: (call) => ok({ availableBalance: call.sandbox.ledger.balance(WALLET), currency: 'USD' as const }),

  getOperation: (call) => {
    const key = call.params.idempotencyKey;
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw validationFailed({ idempotencyKey: 'must be 1-64 characters of [a-zA-Z0-9_-]' });
    const op = call.sandbox.idempotency.operation(key);
    if (!op) throw notFound('operation');
    return ok(op);
  },
} satisfies Partial<ApiHandlers>;
