/**
 * The presigned upload target (PUT /uploads/:uploadId) and the hosted KYC page. Neither is
 * signed: the URL itself authorises the PUT, and the spec forbids the auth headers on it.
 */
import type { FastifyInstance } from 'fastify';
import { rawBodyOf, send } from '../api';
import { MAX_UPLOAD_BYTES } from '../domain/kyc';
import { ApiError, errorBody, successBody, validationFailed } from '../errors';
import type { Sandbox } from '../sandbox';

const AUTH_HEADERS = ['x-api-key', 'x-timestamp', 'x-nonce', 'x-signature'];

export function registerUploadRoutes(app: FastifyInstance, sb: Sandbox): void {
  app.put<{ Params: { uploadId: string } }>('/uploads/:uploadId', { bodyLimit: MAX_UPLOAD_BYTES }, (req, reply) => {
    req.endpointKey = 'upload';
    try {
      const upload = sb.state.uploadsById.get(req.params.uploadId);
      if (!upload) throw new ApiError('NOT_FOUND', 'upload URL not found');
      if (upload.state !== 'AWAITING_UPLOAD') throw new ApiError('UPLOAD_URL_USED', 'this upload URL was already used; request a new one');
      if (sb.now() >= upload.expiresAt) throw new ApiError('UPLOAD_URL_EXPIRED');
      const sent = AUTH_HEADERS.filter((h) => req.headers[h] !== undefined);
      if (sent.length > 0) throw validationFailed(Object.fromEntries(sent.map((h) => [h, 'must not be sent on a presigned upload'])));
      const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (type !== upload.contentType) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be ${upload.contentType}, as declared`);
      const body = rawBodyOf(req);
      if (!body) throw validationFailed({ body: 'must not be empty' });
      upload.state = 'UPLOADED';
      upload.size = body.length;
      return send(reply, 200, successBody({ fileToken: upload.fileToken, size: body.length, contentType: upload.contentType }));
    } catch (err) {
      if (err instanceof ApiError) return send(reply, err.status, err.body);
      return send(reply, 500, errorBody(500, 'INTERNAL_ERROR'));
    }
  });

  // Stands in for the provider's hosted identity page of POST /kyc/cardholders/auto.
  app.get<{ Params: { id: string } }>('/hosted-kyc/:id', (req, reply) => {
    const holder = sb.state.cardholders.get(req.params.id);
    if (!holder || holder.mode !== 'AUTO') return send(reply, 404, errorBody(404, 'NOT_FOUND'));
    return reply.type('text/html; charset=utf-8').send(
      `<!doctype html><title>Sandbox hosted KYC</title><p>Sandbox identity check for ${holder.id}: ${holder.kycStatus}. ` +
        `It completes on its own after kycReviewMs.</p>`,
    );
  });
}
