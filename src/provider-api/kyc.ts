/**
 * KYC cardholders: presigned document uploads, the form, manual (deprecated) and hosted
 * submissions, and the cardholder the provider answers with.
 */
import { Body, callerUrl, list, oneOf, optional, pattern, required, text, isoDate, withExtra } from './rules';

export const KYC_STATUSES = ['PENDING', 'APPROVED', 'REJECTED'] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];
export const KYC_MODES = ['MANUAL', 'FORM', 'AUTO'] as const;
export type KycMode = (typeof KYC_MODES)[number];
export const ID_TYPES = ['PASSPORT', 'ID_CARD', 'DRIVER_LICENSE'] as const;
export const GENDERS = ['MALE', 'FEMALE'] as const;
export const UPLOAD_TYPES = ['IDENTITY_PROOF', 'SELFIE_PROOF', 'ADDRESS_PROOF'] as const;
export type UploadType = (typeof UPLOAD_TYPES)[number];
export const UPLOAD_CONTENT_TYPES = ['image/png', 'image/jpeg', 'application/pdf'] as const;
export type UploadContentType = (typeof UPLOAD_CONTENT_TYPES)[number];
export const OCCUPATIONS = [
  'GOVERNMENT_OFFICERS', 'GOVERNMENT_WORKERS', 'SOE_AND_STATE_ORGAN_EXECUTIVES', 'SOE_AND_STATE_ORGAN_EMPLOYEES',
  'PRIVATE_BUSINESS_OWNERS_AND_EXECUTIVES', 'PRIVATE_BUSINESS_EMPLOYEES', 'NONE_GOVERNMENT_ORGANIZATION_EXECUTIVES',
  'NONE_GOVERNMENT_ORGANIZATION_EMPLOYEES', 'SOLE_TRADERS', 'RETIREES', 'STUDENTS', 'UNEMPLOYED', 'FREELANCER',
] as const;
export const SOURCES_OF_FUND = [
  'SALARY_OR_EMPLOYMENT_INCOME', 'PENSION_OR_RETIREMENT_BENEFITS', 'FINANCIAL_SUPPORT_FROM_IMMEDIATE_FAMILY',
  'BUSINESS_PROFITS', 'INCOME_FROM_SOLE_PROPRIETORSHIP', 'PROCEEDS_FROM_PERSONAL_INVESTMENTS',
  'DIVIDENDS_OR_SHARE_DISTRIBUTIONS', 'LOAN_PROCEEDS', 'INHERITANCE', 'DONATION_OR_GIFT',
] as const;

/** Screened synchronously by the KYC form; the provider may change it, its 400 is authoritative. */
export const RESTRICTED_JURISDICTIONS: readonly string[] = [
  'AF', 'AL', 'BY', 'BA', 'BV', 'BF', 'BI', 'CF', 'CN', 'CD', 'CG', 'HR', 'CU', 'ER', 'ET', 'GU', 'GW', 'HT', 'IR', 'IQ',
  'JO', 'XK', 'LB', 'LR', 'LY', 'ML', 'ME', 'MM', 'AN', 'NI', 'KP', 'MK', 'MP', 'PS', 'PR', 'RU', 'RS', 'SI', 'SO', 'SS',
  'SD', 'TC', 'UA', 'US', 'VI', 'VE', 'VN', 'YE', 'ZW',
];

export const COUNTRY_PATTERN = /^[A-Z]{2}$/;
const country = pattern(COUNTRY_PATTERN, 'must be an ISO 3166-1 alpha-2 code in upper case');
const email = text(128);
/** fileTokens have no prefix in the spec, so none is required here. */
const fileToken = text(Number.MAX_SAFE_INTEGER);

export interface PresignedUploadRequest {
  fileName: string;
  contentType: UploadContentType;
  type: UploadType;
}
export const presignedUploadRequest = new Body<PresignedUploadRequest>({
  fileName: required(text(128)),
  contentType: required(oneOf(UPLOAD_CONTENT_TYPES)),
  type: required(oneOf(UPLOAD_TYPES)),
});

export interface PresignedUpload {
  uploadUrl: string;
  fileToken: string;
  expiresIn: number;
}

/** The form's image slots and the upload type each needs. */
export const KYC_IMAGE_SLOTS = {
  idFrontToken: 'IDENTITY_PROOF',
  idBackToken: 'IDENTITY_PROOF',
  selfieToken: 'SELFIE_PROOF',
  addressProofToken: 'ADDRESS_PROOF',
} as const satisfies Record<string, UploadType>;
export type KycImageSlot = keyof typeof KYC_IMAGE_SLOTS;

export interface KycFormRequest {
  firstName: string;
  lastName: string;
  fullName: string;
  fullNameEn: string;
  mobilePrefix: string;
  mobile: string;
  email: string;
  gender: (typeof GENDERS)[number];
  birthDate: string;
  occupation: (typeof OCCUPATIONS)[number];
  nationality: string;
  idType: (typeof ID_TYPES)[number];
  idNumber: string;
  idExpiryDate: string;
  country: string;
  state: string;
  city: string;
  street: string;
  address: string;
  addressEn: string;
  postalCode: string;
  sourceOfFund: (typeof SOURCES_OF_FUND)[number];
  livingCountry: string;
  idFrontToken: string;
  idBackToken?: string;
  selfieToken?: string;
  addressProofToken?: string;
  attachments: string[];
}

/** The form's own fields: everything but the fileTokens of the uploaded documents. */
export type KycFormFields = Omit<KycFormRequest, KycImageSlot | 'attachments'>;

export const kycFormRequest = new Body<KycFormRequest>(
  {
    firstName: required(text(128)),
    lastName: required(text(128)),
    fullName: required(text(Number.MAX_SAFE_INTEGER)),
    fullNameEn: required(pattern(/^[A-Za-z .'-]*[A-Za-z][A-Za-z .'-]*$/, 'must be Latin letters (with spaces, dots, apostrophes or hyphens)')),
    mobilePrefix: required(pattern(/^\d{1,4}$/, 'must be 1-4 digits')),
    mobile: required(pattern(/^\d{4,20}$/, 'must be 4-20 digits')),
    email: required(email),
    gender: required(oneOf(GENDERS)),
    birthDate: required(isoDate('past')),
    occupation: required(oneOf(OCCUPATIONS)),
    nationality: required(country),
    idType: required(oneOf(ID_TYPES)),
    idNumber: required(text(128)),
    idExpiryDate: required(isoDate('future')),
    country: required(country),
    state: required(text(128)),
    city: required(text(128)),
    street: required(text(256)),
    address: required(text(512)),
    addressEn: required(pattern(/^[\x20-\x7E]+$/, 'must be Latin letters, digits and punctuation', { max: 512, rule: 'must be at most 512 characters' })),
    postalCode: required(text(32)),
    sourceOfFund: required(oneOf(SOURCES_OF_FUND)),
    livingCountry: required(country),
    idFrontToken: required(fileToken),
    idBackToken: optional(fileToken),
    selfieToken: optional(fileToken),
    addressProofToken: optional(fileToken),
    attachments: required(list('must be an array of 1 to 6 fileTokens', fileToken, { min: 1, max: 6 })),
  },
  (body) => ({ ...idBackErrors(body), ...repeatedTokenErrors(body) }),
);

function idBackErrors(body: Record<string, unknown>): Record<string, string> {
  return body.idType === 'ID_CARD' && body.idBackToken === undefined ? { idBackToken: 'is required when idType is ID_CARD' } : {};
}

/**
 * The spec's two rules on repeated tokens, and no more: "the same token cannot be used in two
 * image slots", and in attachments "a token already used in an image slot cannot repeat here".
 * A token repeated within the attachments is the provider's to judge.
 */
function repeatedTokenErrors(body: Record<string, unknown>): Record<string, string> {
  const errors: Record<string, string> = {};
  const slots = new Map<string, string>();
  for (const slot of Object.keys(KYC_IMAGE_SLOTS)) {
    const token = body[slot];
    if (typeof token !== 'string') continue;
    if (slots.has(token)) errors[slot] ??= `must not repeat the token of ${slots.get(token)}`;
    else slots.set(token, slot);
  }
  if (Array.isArray(body.attachments)) {
    body.attachments.forEach((token, i) => {
      if (typeof token === 'string' && slots.has(token)) errors[`attachments.${i}`] ??= `must not repeat the token of ${slots.get(token)}`;
    });
  }
  return errors;
}

/** The form's own fields, without the fileTokens (the CLI's flags). */
export const KYC_FORM_FIELDS = Object.keys(kycFormRequest.fields).filter((k) => !k.endsWith('Token') && k !== 'attachments');

/** Deprecated (removal 10 August 2026). Attachments are PDF reports (the provider checks the upload's type). */
export interface KycManualRequest {
  firstName: string;
  lastName: string;
  idType: (typeof ID_TYPES)[number];
  idNumber: string;
  attachments: string[];
}
export const kycManualRequest = new Body<KycManualRequest>({
  firstName: required(text(128)),
  lastName: required(text(128)),
  idType: required(oneOf(ID_TYPES)),
  idNumber: required(text(128)),
  attachments: required(list('must be a non-empty array of fileTokens', fileToken, { min: 1 })),
});

/** Hosted KYC: the provider runs the identity flow on its own page (verificationUrl). */
export interface KycAutoRequest {
  firstName: string;
  lastName: string;
  email: string;
  /** Where the hosted page sends the user when done: https (rules.ts, callerUrl). */
  redirectUrl?: string;
  /** Shape not shown: fields we do not model, sent as they are. */
  extra?: Record<string, unknown>;
}
/** The names a hosted KYC's `extra` may carry: those our callers use (docs/provider-fidelity.md). */
export const HOSTED_KYC_EXTRA_FIELDS = ['documentCountry'] as const;
export const kycAutoRequest = new Body<KycAutoRequest>(
  withExtra(
    {
      firstName: required(text(128)),
      lastName: required(text(128)),
      email: required(email),
      redirectUrl: optional(callerUrl()),
    },
    HOSTED_KYC_EXTRA_FIELDS,
  ),
);

/** Answer of the form and manual submissions (and, with verificationUrl, of the hosted flow). */
export interface KycSubmission {
  id: string;
  kycStatus: KycStatus;
  mode: KycMode;
  verificationUrl?: string;
}

/** GET /kyc/cardholders/:id */
export interface KycCardholder {
  id: string;
  kycStatus: KycStatus;
  mode: KycMode;
  firstName: string;
  lastName: string;
  idType?: (typeof ID_TYPES)[number];
  /** Last four characters only. */
  idNumberLast4?: string;
  nationality?: string;
  /** Present when REJECTED. */
  reason?: string;
  /** Cards currently backed by this cardholder (FAILED and DELETED ones excluded) and the cap. */
  cardCount: number;
  maxCardCount: number;
  createdAt: number;
  updatedAt: number;
  reviewedAt?: number;
}


