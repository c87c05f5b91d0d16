/** The wallet, and the operations that move its money (GET /operations/{idempotencyKey}). */

export const OPERATION_STATUSES = ['PROCESSING', 'COMPLETED', 'FAILED'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];
export const OPERATION_TYPES = ['FUNDING', 'WITHDRAWAL', 'ESIM_PURCHASE', 'ESIM_RECHARGE', 'PAYOUT'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

export interface WalletBalance {
  availableBalance: number;
  currency: 'USD';
}

/** One per idempotency key of funding, withdrawal, eSIM and payout calls. */
export interface Operation {
  idempotencyKey: string;
  operationId: string;
  type: OperationType;
  status: OperationStatus;
  cardId?: string;
  amount?: number;
  /** eSIM orderNo or payout merOrderNo. */
  orderNo?: string;
  /** The error code that failed it, e.g. INSUFFICIENT_FUNDS. */
  failureReason?: string;
  createdAt: number;
  updatedAt: number;
}
