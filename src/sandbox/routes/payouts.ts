/** Payout endpoints: create (X-Idempotency-Key required) and lookup by merOrderNo. */
import { createPayoutRequest } from '../../provider-api';
import { idempotent, validate, type ApiHandlers } from '../api';
import { createPayout, getPayout, payoutView } from '../domain/payouts';
import { ok, validationFailed } from '../errors';
import { PAYOUT_QUOTE_RATES } from '../fixtures';

export const payoutRoutes = {
  createPayout: (call) => {
    const sb = call.sandbox;
    const { data, key } = validate(call, createPayoutRequest, (raw) => ({
      ...(typeof raw.arriveCurrency === 'string' && /^[A-Z]{3}$/.test(raw.arriveCurrency) && !(raw.arriveCurrency in PAYOUT_QUOTE_RATES)
        ? { arriveCurrency: `must be a supported currency: ${Object.keys(PAYOUT_QUOTE_RATES).join(', ')}` }
        : {}),
    }));
    // A merOrderNo belongs to one payout; the same key retrying is answered by the idempotency record instead.
    // Checked again after the claim, for a second key racing the first through operationProcessingMs.
    const ensureUnused = () => {
      const existing = sb.state.payouts.get(data.merOrderNo);
      if (existing && existing.idempotencyKey !== key) throw validationFailed({ merOrderNo: 'is already used by another payout' });
    };
    ensureUnused();
    return idempotent(call, key, { failure: 'release', operationType: 'PAYOUT' }, (handle) => {
      ensureUnused();
      const payout = createPayout(sb, data, key!, handle!.operationId!);
      handle!.describe({ orderNo: payout.merOrderNo, amount: payout.settleAmount });
      // A retry returns the order as it stands, FAILED included; the Operation follows the payout.
      handle!.replayWith(() => ok(payoutView(payout)));
      handle!.keepProcessing();
      return ok(payoutView(payout));
    });
  },

  getPayout: (call) => ok(payoutView(getPayout(call.sandbox, call.params.merOrderNo, { lagging: true }))),
} satisfies Partial<ApiHandlers>;
