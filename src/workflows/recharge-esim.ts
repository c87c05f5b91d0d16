/**
 * rechargeEsim: renews an issued eSIM's current plan once, under a key derived in the workflow
 * (or the caller's), and answers the recharge order once terminal: ISSUED is the result, a
 * refunded recharge ends EsimRefunded.
 */
import { setWorkflowOptions } from '@temporalio/workflow';
import type { EsimOrderAnswer as EsimOrder } from '../provider/answers';
import type { RechargeEsimInput } from '../shared/types';
import { esimOrderFlow } from './lib/esim-order';

export async function rechargeEsim(input: RechargeEsimInput): Promise<EsimOrder> {
  return esimOrderFlow({ ...input, kind: 'recharge' });
}

// docs/versioning.md: ends once the recharge is settled (minutes): it finishes on the build that started it.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, rechargeEsim);
