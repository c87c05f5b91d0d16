/**
 * All activities, built once per worker from their dependencies (the provider client, the
 * BIN cache, a Temporal client for signal-with-start, the PIN opener). Workflows import only the
 * type `Activities`, through proxyActivities.
 */
import type { Client } from '@temporalio/client';
import type { PinOpener } from '../codec/card-secrets';
import type { CardActionVerifier } from '../codec/card-capability';
import type { DocumentStore } from '../documents/store';
import type { BinCache } from '../provider/bin-cache';
import type { ProviderClient } from '../provider/client';
import type { CardBinAnswer } from '../provider/answers';
import type { ReconciliationMetrics } from '../observability/metrics';
import type { PROVIDER_CALLS } from '../shared/task-queues';
import { createAttemptActivities } from './attempts';
import { createCardActivities } from './cards';
import { createDeploymentActivities } from './deployment';
import { createEarlierRunActivities } from './earlier-runs';
import { createEntityActivities } from './entities';
import { createEsimActivities } from './esim';
import { createFundingActivities } from './funding';
import { createKycActivities } from './kyc';
import { createOpenItemActivities } from './open-items';
import { createOperatorReadActivities } from './operator-reads';
import { createPayoutActivities } from './payouts';
import { createReconciliationActivities } from './reconciliation';
import { createReconciliationVisibilityActivities } from './reconciliation-visibility';
import { createWalletActivities } from './wallet';

export interface ActivityDeps {
  provider: ProviderClient;
  bins: BinCache<CardBinAnswer>;
  temporal: Client;
  /** The workers' PIN private keys (PIN_SEAL_PRIVATE_KEY and retired ones). */
  pins: PinOpener;
  /** The services allowed to act on a card (CARD_ACTION_TRUSTED_KEYS). */
  cardActions: CardActionVerifier;
  /** The only folder KYC documents are read from. */
  documents: DocumentStore;
  /** Where reconciliation runs report their differences (the worker's /metrics); none: not counted. */
  reconciliationMetrics?: ReconciliationMetrics;
  /** The provider's window and reconciliation's share of it (RECONCILE_BUDGET_SHARE). */
  reconcileBudget: { windowMs: number; share: number };
  /** The soonest an open item asks the provider (OPEN_ITEM_MIN_ASK_MS). */
  openItemMinAskMs: number;
  /** The Worker Deployment the workers belong to (TEMPORAL_DEPLOYMENT_NAME); unset on unversioned workers. */
  deploymentName?: string;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createCardActivities(deps),
    ...createFundingActivities(deps),
    ...createKycActivities(deps),
    ...createEsimActivities(deps),
    ...createPayoutActivities(deps),
    ...createWalletActivities(deps),
    ...createOperatorReadActivities(deps),
    ...createEntityActivities(deps),
    ...createOpenItemActivities(deps),
    ...createAttemptActivities(deps),
    ...createEarlierRunActivities(deps),
    ...createReconciliationActivities(deps),
    ...createReconciliationVisibilityActivities(deps),
    ...createDeploymentActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

/**
 * Every provider call the workflows may make (shared/task-queues.ts PROVIDER_CALLS) is an activity
 * of ours: checked here, where the activities are, so shared code imports nothing from this folder.
 */
type CallsWithoutActivity = Exclude<keyof typeof PROVIDER_CALLS, keyof Activities>;
export const EVERY_PROVIDER_CALL_IS_AN_ACTIVITY: [CallsWithoutActivity] extends [never] ? true : CallsWithoutActivity = true;
