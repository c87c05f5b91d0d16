/** The starter's public surface: the typed client other services import. */
export { CardIssuingClient, createCardIssuingClient, applicationFailureOf, summariseFailure, unwrapFailure, readableId } from './client';
export type { CardIssuingClientOptions, FlowHandle, StartOptions, MoneyMovementArgs, FailureSummary } from './client';
export type { FlowStatus, PendingActivity } from './status';
export type * from './flow-types';
