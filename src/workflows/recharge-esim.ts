/**
 * rechargeEsim: renews an issued eSIM's current plan once, under a key derived in the workflow
 * (or the caller's), and answers the recharge order once terminal: ISSUED is the result, a
 * refunded recharge ends EsimRefunded.
 */
import type { EsimOrderAnswer as EsimOrder } from '../provider/answers';
import type { RechargeEsimInput } from '../shared/types';
import { esimOrderFlow } from './lib/esim-order';
import { declareVersioning } from './lib/versioning';

export async function rechargeEsim(input: RechargeEsimInput): Promise<EsimOrder> {
  return esimOrderFlow({ ...input, kind: 'recharge' });
}

// docs/versioning.md: ends once the recharge is settled (minutes): it finishes on the build that started it.
declareVersioning('PINNED', rechargeEsim);
