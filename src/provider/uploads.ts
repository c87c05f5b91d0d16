/**
 * KYC document upload: ask for a presigned URL, PUT the bytes there, hand back the
 * single-use fileToken. The PUT is a plain request with only the Content-Type the URL
 * was asked for: the URL itself authorises it, and the signed transport's headers must
 * not be sent (CONTRACTS §3). An expired URL is replaced once; anything else fails as
 * the mapped ProviderError.
 */
import { request } from 'undici';
import {
  errorFromResponse,
  errorFromTransportFailure,
  fileTooLarge,
  invalidResponse,
  isProviderError,
  type EndpointRef,
} from './errors';
import type { FailureEnvelope } from './field-errors';
import type { HeaderBag } from './rate-headers';
import type { PresignedUploadRequest, UploadContentType, UploadType } from '../provider-api';
import type { PresignedUploadAnswer as PresignedUpload } from './answers';
import { parseObject, readAnswer } from './transport';

/** The provider's limit per file. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
const DEFAULT_PUT_TIMEOUT_MS = 60_000;

/** The PUT is not a provider endpoint; errors name it so. */
const UPLOAD_PUT: EndpointRef = { key: 'uploadPut', method: 'PUT', path: '(presigned upload url)' };

export interface UploadDocumentInput {
  fileName: string;
  contentType: UploadContentType;
  type: UploadType;
  bytes: Buffer;
}

/** What the upload needs of the client: step 1, and the provider's origin (an upload URL on it is the provider's own). */
export interface PresignedUploadSource {
  createPresignedUpload(body: PresignedUploadRequest): Promise<PresignedUpload>;
  readonly origin?: string;
}

/**
 * Where the worker may PUT an applicant's documents: an `https` URL whose host is a name, not an
 * address inside a private, loopback or link-local network (the metadata service, an internal
 * service), or the provider's own origin (the sandbox's `http://127.0.0.1`). Anything else, however
 * the provider's answer came to name it, is refused before a byte is sent.
 */
export function uploadUrlRule(uploadUrl: string, providerOrigin: string | undefined): string | undefined {
  let url: URL;
  try {
    url = new URL(uploadUrl);
  } catch {
    return 'must be an absolute URL';
  }
  if (providerOrigin !== undefined && url.origin === providerOrigin) return undefined;
  if (url.protocol !== 'https:') return 'must be an https URL (or on the provider\'s own origin)';
  if (isInternalHost(url.hostname)) return 'must not point at a private, loopback or link-local address';
  return undefined;
}

function isInternalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host.endsWith('.local')) return true;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host)?.slice(1).map(Number);
  if (v4) {
    const [a, b] = v4;
    return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
  }
  // IPv6 literals: loopback, unique-local, link-local, and IPv4-mapped.
  return host.includes(':') && (host === '::1' || host === '::' || /^f[cd]/.test(host) || /^fe[89ab]/.test(host) || host.startsWith('::ffff:'));
}

export interface UploadOptions {
  putTimeoutMs?: number;
}

/** Uploads one document and returns its fileToken. Files over 10 MB fail as FileTooLarge before any request. */
export async function uploadDocument(client: PresignedUploadSource, input: UploadDocumentInput, opts: UploadOptions = {}): Promise<string> {
  if (input.bytes.length > MAX_UPLOAD_BYTES) throw fileTooLarge('createPresignedUpload', input.bytes.length, MAX_UPLOAD_BYTES);
  const ask = () => client.createPresignedUpload({ fileName: input.fileName, contentType: input.contentType, type: input.type });
  const timeoutMs = opts.putTimeoutMs ?? DEFAULT_PUT_TIMEOUT_MS;
  const first = await ask();
  try {
    await putBytes(first.uploadUrl, input, timeoutMs, client.origin);
    return first.fileToken;
  } catch (err) {
    if (!isProviderError(err, 'UploadUrlExpired')) throw err;
  }
  // Single-use URLs expire (default 600 s); one fresh URL is the documented remedy.
  const second = await ask();
  await putBytes(second.uploadUrl, input, timeoutMs, client.origin);
  return second.fileToken;
}

/** One PUT of the bytes; resolves on 2xx, otherwise rejects with a ProviderError. */
async function putBytes(uploadUrl: string, input: UploadDocumentInput, timeoutMs: number, providerOrigin?: string): Promise<void> {
  const rule = uploadUrlRule(uploadUrl, providerOrigin);
  if (rule) throw invalidResponse('createPresignedUpload', 200, 'UPLOAD_URL_REFUSED', { uploadUrl: rule }, { mayHaveTakenEffect: false });
  let status: number;
  let text: string;
  let headers: HeaderBag;
  try {
    const res = await request(uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': input.contentType },
      body: input.bytes,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.statusCode;
    headers = res.headers as HeaderBag;
    text = await readAnswer(res.body, UPLOAD_PUT.key, res.statusCode);
  } catch (err) {
    if (isProviderError(err)) throw err;
    throw errorFromTransportFailure(err, UPLOAD_PUT);
  }
  if (status >= 200 && status < 300) return;
  const body = parseObject(text);
  if (isExpiredAnswer(status, body)) {
    throw errorFromResponse(410, { ...body, message: 'UPLOAD_URL_EXPIRED' }, headers, UPLOAD_PUT);
  }
  throw errorFromResponse(status, body, headers, UPLOAD_PUT);
}

/**
 * The sandbox says 410 / UPLOAD_URL_EXPIRED; a real object store says 403 (signature
 * expired) or 404 (URL already used or gone). All of them mean: ask for a new URL.
 */
function isExpiredAnswer(status: number, body: FailureEnvelope | undefined): boolean {
  const message = typeof body?.message === 'string' ? body.message : '';
  return status === 410 || message.startsWith('UPLOAD_URL_EXPIRED') || status === 403 || status === 404;
}
