/**
 * Reads of the provider that other services need but that are no flow of their own: the
 * wallet balance, the eSIM plan catalogue, the card BINs and the record of an idempotency key.
 * They run as short workflows so that callers (the operator CLI among them) never hold provider
 * credentials and every read shares the fleet's rate budget and retries.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { CardBinAnswer, OperationAnswer, WalletBalanceAnswer } from '../provider/answers';
import { describeErrors, hasErrors, keyErrors } from '../shared/card-rules';
import { FailureType } from '../shared/failures';
import { FLOW_KIND } from '../shared/search-attributes';
import { failWith, providerCalls } from './lib/provider';
import { declareVersioning } from './lib/versioning';

export async function walletBalance(): Promise<WalletBalanceAnswer> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'walletBalance' }]);
  return providerCalls('general').getWalletBalance();
}

export async function esimPlans(): Promise<Array<Record<string, unknown>>> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'esimPlans' }]);
  return providerCalls('general').listEsimPlans();
}

/** The BINs the project may issue from, as the worker's 24 h cache holds them (`refresh`: asked of the provider now). */
export async function cardBins(input: { refresh?: boolean } = {}): Promise<CardBinAnswer[]> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'cardBins' }]);
  return providerCalls('general').listCardBins({ refresh: input?.refresh === true });
}

/** GET /operations/{key}: the provider's record of an idempotency key, whole; null when it has none. Reads only. */
export async function operationRecord(input: { idempotencyKey: string }): Promise<OperationAnswer | null> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'operationRecord' }]);
  const errors = keyErrors(input?.idempotencyKey);
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid operation lookup: ${describeErrors(errors)}`, [{ errors }]);
  return providerCalls('general').readOperationRecord({ idempotencyKey: input.idempotencyKey });
}

// docs/versioning.md: each is one read, finished on the build that started it.
for (const read of [walletBalance, esimPlans, cardBins, operationRecord]) declareVersioning('PINNED', read);
