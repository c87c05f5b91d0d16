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
  isProviderError,
  type EndpointRef,
  type FailureEnvelope,
  type HeaderBag,
} from './errors';
import type { PresignedUploadRequest, UploadContentType, UploadType } from './api';
import type { PresignedUploadAnswer as PresignedUpload } from './answers';
import { parseObject } from './transport';

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

/** What the upload needs of the client: only step 1. */
export interface PresignedUploadSource {
  createPresignedUpload(body: PresignedUploadRequest): Promise<PresignedUpload>;
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
    await putBytes(first.uploadUrl, input, timeoutMs);
    return first.fileToken;
  } catch (err) {
    if (!isProviderError(err, 'UploadUrlExpired')) throw err;
  }
  // Single-use URLs expire (default 600 s); one fresh URL is the documented remedy.
  const second = await ask();
  await putBytes(second.uploadUrl, input, timeoutMs);
  return second.fileToken;
}

/** One PUT of the bytes; resolves on 2xx, otherwise rejects with a ProviderError. */
async function putBytes(uploadUrl: string, input: UploadDocumentInput, timeoutMs: number): Promise<void> {
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
    text = await res.body.text();
  } catch (err) {
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
