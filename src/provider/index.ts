/** The provider client's public surface. */
export { ProviderClient, createProviderClient } from './client';
export type { ProviderClientOptions, CallOptions, IdempotentCallOptions, RequiredIdempotencyOptions, ProviderConfigSlice } from './client';
export {
  ProviderError,
  PROVIDER_ERROR_TYPES,
  ERROR_TRAITS,
  isProviderError,
  errorFromResponse,
  errorFromTransportFailure,
} from './errors';
export type { ProviderErrorType, ProviderErrorInit, EndpointRef } from './errors';
export { ProviderTransport, unwrapEnvelope } from './transport';
export type { TransportOptions, TransportRequest, TransportResponse } from './transport';
export { RateBudget, parseRateHeaders, retryDelayFor, randomJitter } from './rate-budget';
export type { RateWindow } from './rate-budget';
export { uploadDocument, MAX_UPLOAD_BYTES } from './uploads';
export type { UploadDocumentInput, PresignedUploadSource, UploadOptions } from './uploads';
export { BinCache, BIN_CACHE_TTL_MS } from './bin-cache';
export type { BinSource, BinCacheOptions } from './bin-cache';
export { HmacSha256Scheme } from './signing';
export type { SigningScheme, SignedHeaders, SignableRequest } from './signing';
