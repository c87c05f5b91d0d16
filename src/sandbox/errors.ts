/**
 * The envelope and the one error type routes throw. The HTTP layer turns an ApiError into
 * {code, message, errors?}; anything else becomes a 500 INTERNAL_ERROR with no details.
 */
import { PROVIDER_ERROR_CODES, type FieldErrors, type ProviderErrorCode } from '../shared/failures';

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ProviderErrorCode,
    readonly detail?: string,
    readonly errors?: FieldErrors,
  ) {
    super(detail ? `${code}: ${detail}` : code);
    this.status = PROVIDER_ERROR_CODES[code].status;
  }

  get body(): ErrorBody {
    return errorBody(this.status, this.message, this.errors);
  }
}

export interface ErrorBody {
  code: number;
  message: string;
  errors?: FieldErrors;
}

export function errorBody(status: number, message: string, errors?: FieldErrors): ErrorBody {
  return errors && Object.keys(errors).length > 0 ? { code: status, message, errors } : { code: status, message };
}

export function successBody<T>(data: T): { code: 0; message: 'SUCCESS'; data: T } {
  return { code: 0, message: 'SUCCESS', data };
}

/** 400 naming every bad field. */
export function validationFailed(errors: FieldErrors, detail?: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, errors);
}

export function notFound(what: string): ApiError {
  return new ApiError('NOT_FOUND', `${what} not found`);
}

/** What a route answers: a status (200 unless said) and the `data` of the envelope. */
export interface ApiResult<T = unknown> {
  status: number;
  data: T;
}

export function ok<T>(data: T, status = 200): ApiResult<T> {
  return { status, data };
}
