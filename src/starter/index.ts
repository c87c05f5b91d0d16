/** The starter's public surface: the typed client other services import. */
export { CardIssuingClient, createCardIssuingClient, applicationFailureOf, summariseFailure, unwrapFailure, readableId } from './client';
export type { CardIssuingClientOptions, FlowHandle, StartOptions, MoneyMovementArgs, FailureSummary } from './client';
export type { FlowStatus, PendingActivity } from './status';
export type * from './flow-types';
// Which failure `type` each flow may end with (docs/provider-fidelity.md, "Failure types").
export { ANY_FLOW_FAILURES, FAILURE_TYPES, FLOW_FAILURES, isFailureType } from '../shared/failures';
export type { FailureTypeName, FlowFailureType, FlowName } from '../shared/failures';
