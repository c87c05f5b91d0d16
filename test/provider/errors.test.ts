/** The mapping from the provider's answers to error types, without a server. */
import { CLASSIFICATION, classifyMessage } from '../../src/provider/classification';
import {
  ERROR_TRAITS,
  ProviderError,
  errorFromResponse,
  errorFromTransportFailure,
  isProviderError,
  type EndpointRef,
} from '../../src/provider/errors';
import { PROVIDER_ERROR_CODES, PROVIDER_ERROR_TYPES } from '../../src/shared/failures';
import { unwrapEnvelope } from '../../src/provider/transport';

const createCard: EndpointRef = { key: 'createCard', method: 'POST', path: '/cards' };
const fundCard: EndpointRef = { key: 'fundCard', method: 'POST', path: '/cards/:cardId/funding' };
const kycForm: EndpointRef = { key: 'submitKycForm', method: 'POST', path: '/kyc/cardholders/form' };
const NOW = 1_767_225_600_000;

describe('errorFromResponse', () => {
  it.each([
    [400, 'VALIDATION_FAILED', 'ValidationFailed'],
    [403, 'IP_NOT_WHITELISTED', 'IpNotWhitelisted'],
    [403, 'INVALID_SIGNATURE', 'InvalidSignature'],
    [404, 'NOT_FOUND', 'NotFound'],
    [409, 'NONCE_REUSED', 'NonceReused'],
    [409, 'IDEMPOTENCY_CONFLICT', 'IdempotencyConflict'],
    [409, 'IDEMPOTENCY_IN_PROGRESS', 'IdempotencyInProgress'],
    [409, 'IDEMPOTENCY_KEY_TERMINAL', 'IdempotencyKeyTerminal'],
    [409, 'DUPLICATE_CARDHOLDER', 'DuplicateCardholder'],
    [422, 'INSUFFICIENT_FUNDS', 'InsufficientFunds'],
    [422, 'PLAN_UNAVAILABLE', 'PlanUnavailable'],
    [422, 'CARDHOLDER_NOT_APPROVED', 'CardholderNotApproved'],
    [422, 'CARD_LIMIT_REACHED', 'CardLimitReached'],
    [422, 'INVALID_STATE', 'InvalidState'],
    [500, 'INTERNAL_ERROR', 'ServerError'],
    [410, 'UPLOAD_URL_EXPIRED', 'UploadUrlExpired'],
  ])('%i %s → %s', (status, code, type) => {
    const err = errorFromResponse(status, { code: status, message: `${code}: some text` }, {}, fundCard, NOW);
    expect(err.type).toBe(type);
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(ERROR_TRAITS[err.type].retryable);
  });

  it('maps by status when the body is not JSON (a proxy page) or the code is unknown', () => {
    expect(errorFromResponse(502, undefined, {}, fundCard, NOW).type).toBe('ServerError');
    expect(errorFromResponse(502, undefined, {}, fundCard, NOW).mayHaveTakenEffect).toBe(true);
    expect(errorFromResponse(413, undefined, {}, fundCard, NOW).type).toBe('FileTooLarge');
    expect(errorFromResponse(404, { message: 'Not Found' }, {}, fundCard, NOW).type).toBe('NotFound');
    // A 409 that does not say which of the spec's four it is: in progress until the record or the same POST says otherwise.
    expect(errorFromResponse(409, { message: 'SOMETHING_NEW' }, {}, fundCard, NOW)).toMatchObject({ type: 'IdempotencyInProgress', retryable: true, mayHaveTakenEffect: true });
    expect(errorFromResponse(409, undefined, {}, fundCard, NOW).type).toBe('IdempotencyInProgress');
    expect(errorFromResponse(429, undefined, {}, fundCard, NOW).type).toBe('RateLimited');
  });

  it('keeps the field map of a validation failure', () => {
    const err = errorFromResponse(400, { code: 400, message: 'VALIDATION_FAILED', errors: { amount: 'min 100' } }, {}, fundCard, NOW);
    expect(err.type).toBe('ValidationFailed');
    expect(err.errors).toEqual({ amount: 'min 100' });
    expect(err.message).toContain('amount');
  });

  it('reads a cardBinId error on POST /cards as StaleCardBin, elsewhere as ValidationFailed', () => {
    const body = { code: 400, message: 'VALIDATION_FAILED', errors: { cardBinId: 'unknown' } };
    expect(errorFromResponse(400, body, {}, createCard, NOW).type).toBe('StaleCardBin');
    expect(errorFromResponse(400, body, {}, fundCard, NOW).type).toBe('ValidationFailed');
  });

  it('takes resetAt of a 429 from X-RateLimit-Reset, else from the message', () => {
    const body = { code: 429, message: 'RATE_LIMITED: limit of 70 per 60s reached, retry in 12 seconds' };
    const fromHeader = errorFromResponse(429, body, { 'x-ratelimit-reset': String(NOW + 5000) }, fundCard, NOW);
    expect(fromHeader).toMatchObject({ type: 'RateLimited', resetAt: NOW + 5000, retryAfterMs: 5000, retryable: true, mayHaveTakenEffect: false });
    const fromMessage = errorFromResponse(429, body, {}, fundCard, NOW);
    expect(fromMessage).toMatchObject({ resetAt: NOW + 12_000, retryAfterMs: 12_000 });
  });

  it('never puts the provider free text into the message', () => {
    const err = errorFromResponse(400, { code: 400, message: 'VALIDATION_FAILED: card 4111111111111111 cvv 123' }, {}, fundCard, NOW);
    expect(err.message).not.toContain('4111');
    expect(JSON.stringify(err)).not.toContain('4111');
  });
});

describe('the classification table, with plain provider wording', () => {
  // One case per row of CLASSIFICATION: [HTTP status, the provider's plain message, expected type].
  const plain: Array<[number, string, string]> = [
    [429, 'Too many requests, please wait 12s before retrying', 'RateLimited'],
    [403, 'Request IP address is not whitelisted', 'IpNotWhitelisted'],
    [403, 'Invalid signature', 'InvalidSignature'],
    [409, 'Nonce has already been used', 'NonceReused'],
    [409, 'A request with this idempotency key is still being processed', 'IdempotencyInProgress'],
    [409, 'The request with this idempotency key already failed; use a new key', 'IdempotencyKeyTerminal'],
    [409, 'Idempotency key was used with a different request', 'IdempotencyConflict'],
    [400, 'Insufficient wallet balance', 'InsufficientFunds'],
    [422, 'Not enough balance in wallet', 'InsufficientFunds'],
    [400, 'This plan is currently unavailable', 'PlanUnavailable'],
    [400, 'Cardholder is not approved', 'CardholderNotApproved'],
    [400, 'Card limit reached for this cardholder', 'CardLimitReached'],
    [409, 'Duplicate cardholder: a submission with this ID document is pending or approved', 'DuplicateCardholder'],
    [403, 'Upload URL has expired', 'UploadUrlExpired'],
    [413, 'File is too large', 'FileTooLarge'],
    [404, 'Resource not found', 'NotFound'],
    [400, 'Operation not allowed in the current state', 'InvalidState'],
    [400, 'Invalid request parameters', 'ValidationFailed'],
    [500, 'Internal server error', 'ServerError'],
  ];
  it.each(plain)('%i "%s" → %s', (status, message, type) => {
    // A duplicate cardholder is only ever a KYC submission's answer.
    const endpoint = type === 'DuplicateCardholder' ? kycForm : fundCard;
    expect(errorFromResponse(status, { code: status, message }, {}, endpoint, NOW).type).toBe(type);
  });

  it.each([
    'Duplicate idempotency key: the first request is being processed',
    'Duplicate request; the original is currently processing',
    'Conflict: a request with this key is processing, retry later',
  ])('suspected (issue 39): a funding\'s 409 "%s" is in progress, never a duplicate cardholder or a conflict', (message) => {
    expect(errorFromResponse(409, { code: 409, message }, {}, fundCard, NOW).type).toBe('IdempotencyInProgress');
  });

  it('"duplicate" on a funding is not a duplicate cardholder: an unreadable 409 is in progress until proven otherwise', () => {
    expect(errorFromResponse(409, { code: 409, message: 'Duplicate request' }, {}, fundCard, NOW).type).toBe('IdempotencyInProgress');
    expect(errorFromResponse(409, { code: 409, message: 'Duplicate cardholder' }, {}, kycForm, NOW).type).toBe('DuplicateCardholder');
  });

  it('has a plain-wording case for every row', () => {
    const covered = new Set(plain.map(([, , type]) => type));
    for (const r of CLASSIFICATION) expect(covered).toContain(r.type);
  });

  // Every provider code of shared/failures.ts, sent as the code word (contract profile) and as its
  // plain wording (minimal profile), with its status: both read as the type the table declares.
  it.each(Object.entries(PROVIDER_ERROR_CODES))('%s, as code word and as plain wording, reads as its declared type', (code, meaning) => {
    const endpoint = meaning.type === 'DuplicateCardholder' ? kycForm : fundCard;
    expect(errorFromResponse(meaning.status, { code: meaning.status, message: `${code}: detail` }, {}, endpoint, NOW).type).toBe(meaning.type);
    expect(errorFromResponse(meaning.status, { code: meaning.status, message: meaning.plain }, {}, endpoint, NOW).type).toBe(meaning.type);
  });

  it('reads the code words the sandbox sends, case-insensitive wording, and nothing for unknown text', () => {
    expect(classifyMessage('INSUFFICIENT_FUNDS')).toBe('InsufficientFunds');
    expect(classifyMessage('INSUFFICIENT BALANCE')).toBe('InsufficientFunds');
    expect(classifyMessage('something else happened')).toBeUndefined();
  });

  it('a 5xx stays a ServerError and a 429 a RateLimited, whatever the words say', () => {
    expect(errorFromResponse(503, { code: 503, message: 'Insufficient wallet balance' }, {}, fundCard, NOW).type).toBe('ServerError');
    expect(errorFromResponse(429, { code: 429, message: 'Cardholder is not approved' }, {}, fundCard, NOW).type).toBe('RateLimited');
  });

  it('a refusal no code, wording or status explains took no effect and is not retried', () => {
    expect(errorFromResponse(418, { code: 418, message: 'I am a teapot' }, {}, fundCard, NOW)).toMatchObject({
      type: 'InvalidResponse',
      retryable: false,
      mayHaveTakenEffect: false,
    });
  });

  it('rows are tried in order: a duplicate that names the earlier one as pending is no CardholderNotApproved', () => {
    expect(classifyMessage('A cardholder with this ID is already pending', kycForm)).toBe('DuplicateCardholder');
    expect(classifyMessage('Cardholder is pending review')).toBe('CardholderNotApproved');
  });

  it('reads the seconds to wait from plain wording', () => {
    const err = errorFromResponse(429, { code: 429, message: 'Too many requests, please wait 12s before retrying' }, {}, fundCard, NOW);
    expect(err).toMatchObject({ resetAt: NOW + 12_000, retryAfterMs: 12_000 });
  });
});

describe('the errors map', () => {
  it('keeps string rules and replaces anything else, so an echoed input cannot travel on', () => {
    const err = errorFromResponse(
      400,
      { code: 400, message: 'VALIDATION_FAILED', errors: { amount: 'must be an integer', cardNumber: { received: '4111111111111111' } as unknown as string } },
      {},
      fundCard,
      NOW,
    );
    expect(err.errors).toEqual({ amount: 'must be an integer', cardNumber: 'is invalid' });
    expect(JSON.stringify(err)).not.toContain('4111111111111111');
  });
});

describe('errorFromTransportFailure', () => {
  const withCode = (code: string) => Object.assign(new Error('x'), { code });

  it('a refused connection never reached the provider', () => {
    expect(errorFromTransportFailure(withCode('ECONNREFUSED'), fundCard)).toMatchObject({ type: 'NetworkError', retryable: true, mayHaveTakenEffect: false });
  });
  it('a reset after sending may have taken effect', () => {
    expect(errorFromTransportFailure(withCode('UND_ERR_SOCKET'), fundCard)).toMatchObject({ type: 'NetworkError', mayHaveTakenEffect: true });
  });
  it('timeouts waiting for the answer may have taken effect', () => {
    expect(errorFromTransportFailure(withCode('UND_ERR_HEADERS_TIMEOUT'), fundCard)).toMatchObject({ type: 'Timeout', mayHaveTakenEffect: true });
    expect(errorFromTransportFailure(new DOMException('t', 'TimeoutError'), fundCard)).toMatchObject({ type: 'Timeout', mayHaveTakenEffect: true });
    expect(errorFromTransportFailure(withCode('UND_ERR_CONNECT_TIMEOUT'), fundCard)).toMatchObject({ type: 'Timeout', mayHaveTakenEffect: false });
  });
});

describe('unwrapEnvelope', () => {
  it('returns data on success', () => {
    expect(unwrapEnvelope(200, '{"code":0,"message":"SUCCESS","data":{"a":1}}', {}, fundCard, NOW)).toEqual({ a: 1 });
  });
  it('a 2xx that is not an envelope is an InvalidResponse that may have taken effect', () => {
    expect(() => unwrapEnvelope(200, '<html>', {}, fundCard, NOW)).toThrow(expect.objectContaining({ type: 'InvalidResponse', mayHaveTakenEffect: true }));
  });
  it('a 200 carrying a failure envelope maps by its code', () => {
    expect(() => unwrapEnvelope(200, '{"code":422,"message":"INSUFFICIENT_FUNDS"}', {}, fundCard, NOW)).toThrow(expect.objectContaining({ type: 'InsufficientFunds', status: 422 }));
  });
});

describe('isProviderError', () => {
  it('recognises by type, also on plain objects that crossed a boundary', () => {
    expect(isProviderError(new ProviderError({ type: 'NotFound' }))).toBe(true);
    expect(isProviderError({ type: 'Timeout', message: 'x' }, 'Timeout')).toBe(true);
    expect(isProviderError({ type: 'Timeout' }, 'NotFound')).toBe(false);
    expect(isProviderError(new Error('x'))).toBe(false);
    expect(isProviderError({ type: 'SomethingElse' })).toBe(false);
  });
  it('has traits for every type', () => {
    for (const t of PROVIDER_ERROR_TYPES) expect(ERROR_TRAITS[t]).toBeDefined();
  });
});

describe('the spec explicit rules win over wording (issue 21)', () => {
  it('a 400 on POST /cards whose errors map names cardBinId is a stale BIN, even when worded "BIN not found"', () => {
    const err = errorFromResponse(400, { code: 400, message: 'BIN not found', errors: { cardBinId: 'BIN not found' } }, {}, createCard, NOW);
    expect(err.type).toBe('StaleCardBin');
    expect(err.errors).toEqual({ cardBinId: 'BIN not found' });
  });

  it('reads the errors as an array of {field, message}', () => {
    const body = { code: 400, message: 'Bad request', errors: [{ field: 'cardBinId', message: 'unknown BIN' }, { field: 'initialAmount', message: 'too small' }] };
    const err = errorFromResponse(400, body, {}, createCard, NOW);
    expect(err.type).toBe('StaleCardBin');
    expect(err.errors).toEqual({ cardBinId: 'unknown BIN', initialAmount: 'too small' });
  });

  it('reads the errors inside data, as data.errors or as data itself', () => {
    const nested = errorFromResponse(400, { code: 400, message: 'Invalid', data: { errors: { cardBinId: 'stale' } } }, {}, createCard, NOW);
    expect(nested.type).toBe('StaleCardBin');
    const flat = errorFromResponse(400, { code: 400, message: 'Invalid', data: { amount: 'must be at least 100' } }, {}, fundCard, NOW);
    expect(flat).toMatchObject({ type: 'ValidationFailed', errors: { amount: 'must be at least 100' } });
    const listed = errorFromResponse(400, { code: 400, message: 'Invalid', data: [{ field: 'amount', message: 'too small' }] }, {}, fundCard, NOW);
    expect(listed.errors).toEqual({ amount: 'too small' });
  });

  it('never carries a value the provider echoed in an array entry', () => {
    const err = errorFromResponse(400, { code: 400, message: 'Invalid', errors: [{ field: 'pin', message: { value: '1234' } }] }, {}, fundCard, NOW);
    expect(err.errors).toEqual({ pin: 'is invalid' });
  });

  it.each([
    'Withdrawal amount exceeds available balance',
    'Amount exceeds the card balance',
    'Not enough balance on the card',
    'not enough funds',
    'Card balance is too low for this withdrawal',
    'Requested amount is greater than the available balance',
    'Insufficient card balance',
  ])('"%s" on a 400 is InsufficientFunds', (message) => {
    expect(errorFromResponse(400, { code: 400, message }, {}, fundCard, NOW).type).toBe('InsufficientFunds');
  });

  it('a wording about a file size is still FileTooLarge, not a balance', () => {
    expect(errorFromResponse(400, { code: 400, message: 'File size exceeds 10 MB' }, {}, fundCard, NOW).type).toBe('FileTooLarge');
  });
});
