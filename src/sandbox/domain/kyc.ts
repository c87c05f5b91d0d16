/**
 * KYC: presigned uploads and their single-use tokens, submissions (form, manual, hosted),
 * the duplicate rule on idType + idNumber, and review PENDING → APPROVED | REJECTED after
 * kycReviewMs (idNumber REJECT… is rejected) or by a control call.
 */
import {
  KYC_IMAGE_SLOTS, RESTRICTED_JURISDICTIONS, type FieldErrors, type KycCardholder, type KycImageSlot, type PresignedUpload,
  type PresignedUploadRequest, type UploadType,
} from '../../provider-api';
import { ApiError, notFound } from '../errors';
import { newId, randomChars } from '../ids';
import { EXTERNAL, InsufficientBalance, WALLET } from '../ledger';
import type { Sandbox } from '../sandbox';
import type { CardholderRecord, UploadRecord } from '../state';

export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

export function createUpload(sb: Sandbox, req: PresignedUploadRequest): PresignedUpload {
  const upload: UploadRecord = {
    uploadId: newId('upl', 24),
    // The spec gives fileTokens no prefix; the minimal profile shows a client that needs none.
    fileToken: sb.config.profile === 'contract' ? newId('ftok', 24) : randomChars(32),
    type: req.type,
    contentType: req.contentType,
    fileName: req.fileName,
    expiresAt: sb.now() + sb.config.uploadExpiresInSec * 1000,
    state: 'AWAITING_UPLOAD',
  };
  sb.state.uploadsById.set(upload.uploadId, upload);
  sb.state.uploadsByToken.set(upload.fileToken, upload);
  return { uploadUrl: `${sb.baseUrl}/uploads/${upload.uploadId}`, fileToken: upload.fileToken, expiresIn: sb.config.uploadExpiresInSec };
}

/** One place in a submission where a token is used, and what that place accepts. */
export interface TokenUse {
  field: string;
  token: string;
  type?: UploadType;
  pdfOnly?: boolean;
}

/** Checks tokens without consuming them: known, uploaded, unused, of the slot's type. */
export function tokenErrors(sb: Sandbox, uses: TokenUse[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const use of uses) {
    const upload = sb.state.uploadsByToken.get(use.token);
    if (!upload) errors[use.field] = 'unknown fileToken';
    else if (upload.state === 'AWAITING_UPLOAD') errors[use.field] = 'file was not uploaded yet';
    else if (upload.state === 'CONSUMED') errors[use.field] = 'fileToken was already used';
    else if (use.type && upload.type !== use.type) errors[use.field] = `must be a fileToken of upload type ${use.type}`;
    else if (use.pdfOnly && upload.contentType !== 'application/pdf') errors[use.field] = 'must be a fileToken of a PDF upload';
  }
  return errors;
}

export function formTokenUses(body: Partial<Record<KycImageSlot | 'attachments', unknown>>): TokenUse[] {
  const uses: TokenUse[] = [];
  for (const [slot, type] of Object.entries(KYC_IMAGE_SLOTS) as Array<[KycImageSlot, UploadType]>) {
    const token = body[slot];
    if (typeof token === 'string') uses.push({ field: slot, token, type });
  }
  if (Array.isArray(body.attachments)) {
    body.attachments.forEach((t, i) => typeof t === 'string' && uses.push({ field: `attachments.${i}`, token: t }));
  }
  return uses;
}

export function restrictedJurisdictionErrors(body: Record<string, unknown>, fields: string[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const f of fields) {
    if (typeof body[f] === 'string' && RESTRICTED_JURISDICTIONS.includes(body[f] as string)) errors[f] = 'is a restricted jurisdiction';
  }
  return errors;
}

export function activeCardCount(sb: Sandbox, cardholderId: string): number {
  let n = 0;
  for (const c of sb.state.cards.values()) if (c.cardholderId === cardholderId && c.status !== 'FAILED' && c.status !== 'DELETED') n++;
  return n;
}

/**
 * Accepts a submission that passed validation: duplicate rule, fee, then (only now) the
 * tokens are consumed and the PENDING record created.
 */
export function acceptSubmission(
  sb: Sandbox,
  s: { mode: CardholderRecord['mode']; firstName: string; lastName: string; idType?: CardholderRecord['idType']; idNumber?: string; nationality?: string; tokens: string[] },
): CardholderRecord {
  if (s.idType && s.idNumber) {
    for (const other of sb.state.cardholders.values()) {
      if (other.idType === s.idType && other.idNumber === s.idNumber && other.kycStatus !== 'REJECTED') {
        throw new ApiError('DUPLICATE_CARDHOLDER', `a ${other.kycStatus} cardholder with this idType and idNumber exists`);
      }
    }
  }
  const now = sb.now();
  const holder: CardholderRecord = {
    id: newId('kyc'),
    mode: s.mode,
    kycStatus: 'PENDING',
    firstName: s.firstName,
    lastName: s.lastName,
    idType: s.idType,
    idNumber: s.idNumber,
    nationality: s.nationality,
    rejectAtReview: (s.idNumber ?? '').toUpperCase().startsWith('REJECT'),
    createdAt: now,
    updatedAt: now,
  };
  const fee = sb.config.kycFeeCents;
  if (fee > 0) {
    try {
      sb.ledger.transfer({ kind: 'KYC_FEE', from: WALLET, to: EXTERNAL, amount: fee, ref: holder.id });
    } catch (err) {
      if (err instanceof InsufficientBalance) throw new ApiError('INSUFFICIENT_FUNDS', 'wallet balance is below the KYC fee');
      throw err;
    }
  }
  for (const token of s.tokens) sb.state.uploadsByToken.get(token)!.state = 'CONSUMED';
  sb.state.cardholders.set(holder.id, holder);
  holder.timer = sb.timers.after(sb.config.kycReviewMs, () =>
    decideKyc(sb, holder.id, holder.rejectAtReview ? 'REJECTED' : 'APPROVED', holder.rejectAtReview ? 'identity document could not be verified' : undefined),
  );
  return holder;
}

/** Ends the review of a PENDING cardholder; false when it was not PENDING. */
export function decideKyc(sb: Sandbox, id: string, status: 'APPROVED' | 'REJECTED', reason?: string): boolean {
  const holder = sb.state.cardholders.get(id);
  if (!holder || holder.kycStatus !== 'PENDING') return false;
  sb.timers.cancel(holder.timer);
  holder.kycStatus = status;
  holder.reason = status === 'REJECTED' ? (reason ?? 'rejected by compliance review') : undefined;
  holder.reviewedAt = holder.updatedAt = sb.now();
  sb.webhooks.emit('CARDHOLDER_KYC_STATUS', { id: holder.id, kycStatus: status, ...(holder.reason ? { reason: holder.reason } : {}) });
  return true;
}

export function cardholderView(sb: Sandbox, id: string): KycCardholder {
  const h = sb.state.cardholders.get(id);
  if (!h) throw notFound('cardholder');
  const view: KycCardholder = {
    id: h.id,
    kycStatus: h.kycStatus,
    mode: h.mode,
    firstName: h.firstName,
    lastName: h.lastName,
    cardCount: activeCardCount(sb, h.id),
    maxCardCount: sb.config.maxCardCount,
    createdAt: h.createdAt,
    updatedAt: h.updatedAt,
  };
  if (h.idType) view.idType = h.idType;
  if (h.idNumber) view.idNumberLast4 = h.idNumber.slice(-4);
  if (h.nationality) view.nationality = h.nationality;
  if (h.reason) view.reason = h.reason;
  if (h.reviewedAt !== undefined) view.reviewedAt = h.reviewedAt;
  return view;
}
