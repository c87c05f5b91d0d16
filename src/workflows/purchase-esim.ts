/**
 * purchaseEsim: charges the wallet for a plan once, under a key derived in the workflow (or
 * the caller's), and waits until the eSIM is ISSUED. A plan that cannot be sold fails
 * PlanUnavailable, an underfunded wallet InsufficientFunds, both with no charge; an issuance
 * that fails is refunded in full by the provider and ends EsimRefunded.
 */
import type { EsimOrderAnswer as EsimOrder } from '../provider/answers';
import type { PurchaseEsimInput } from '../shared/types';
import { esimOrderFlow } from './lib/esim-order';
import { declareVersioning } from './lib/versioning';

export async function purchaseEsim(input: PurchaseEsimInput): Promise<EsimOrder> {
  return esimOrderFlow({ ...input, kind: 'purchase' });
}

// docs/versioning.md: ends once the eSIM is issued or refunded (minutes): it finishes on the build that started it.
declareVersioning('PINNED', purchaseEsim);
