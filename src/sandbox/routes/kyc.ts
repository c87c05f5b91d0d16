/** KYC endpoints: presigned uploads, form / manual / hosted submissions, status query. */
import {
  kycAutoRequest, kycFormRequest, kycManualRequest, presignedUploadRequest,
} from '../../provider-api';
import { validate, type ApiHandlers } from '../api';
import { acceptSubmission, cardholderView, createUpload, formTokenUses, restrictedJurisdictionErrors, tokenErrors } from '../domain/kyc';
import { ok } from '../errors';

const SCREENED_FIELDS = ['nationality', 'country', 'livingCountry'];

export const kycRoutes = {
  createPresignedUpload: (call) => {
    const { data } = validate(call, presignedUploadRequest);
    return ok(createUpload(call.sandbox, data));
  },

  submitKycForm: (call) => {
    // Every check before anything is consumed: a 400 (restricted country included) leaves the tokens usable.
    const { data } = validate(call, kycFormRequest, (raw) => ({
      ...tokenErrors(call.sandbox, formTokenUses(raw)),
      ...restrictedJurisdictionErrors(raw, SCREENED_FIELDS),
    }));
    const holder = acceptSubmission(call.sandbox, {
      mode: 'FORM',
      firstName: data.firstName,
      lastName: data.lastName,
      idType: data.idType,
      idNumber: data.idNumber,
      nationality: data.nationality,
      tokens: formTokenUses(data).map((u) => u.token),
    });
    return ok({ id: holder.id, kycStatus: holder.kycStatus, mode: holder.mode });
  },

  submitKycManual: (call) => {
    const { data } = validate(call, kycManualRequest, (raw) =>
      tokenErrors(
        call.sandbox,
        (Array.isArray(raw.attachments) ? raw.attachments : []).flatMap((t, i) => (typeof t === 'string' ? [{ field: `attachments.${i}`, token: t, pdfOnly: true }] : [])),
      ),
    );
    const holder = acceptSubmission(call.sandbox, {
      mode: 'MANUAL', firstName: data.firstName, lastName: data.lastName, idType: data.idType, idNumber: data.idNumber, tokens: data.attachments,
    });
    return ok({ id: holder.id, kycStatus: holder.kycStatus, mode: holder.mode });
  },

  startHostedKyc: (call) => {
    const { data } = validate(call, kycAutoRequest);
    const holder = acceptSubmission(call.sandbox, { mode: 'AUTO', firstName: data.firstName, lastName: data.lastName, tokens: [] });
    return ok({ id: holder.id, kycStatus: holder.kycStatus, mode: holder.mode, verificationUrl: `${call.sandbox.baseUrl}/hosted-kyc/${holder.id}` });
  },

  getKycCardholder: (call) => ok(cardholderView(call.sandbox, call.params.id)),
} satisfies Partial<ApiHandlers>;
