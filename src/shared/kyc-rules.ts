/**
 * The rules an onboardCardholder input must meet, checked before any provider call: the
 * provider's own KYC request rules (provider-api/kyc.ts, shared with the sandbox), with each
 * document standing in for the fileToken it will become, plus the shape of the document
 * references. Pure and free of schema libraries: used by the workflow and by the operator CLI.
 */
import {
  KYC_IMAGE_SLOTS, kycAutoRequest, kycFormRequest, kycManualRequest, UPLOAD_CONTENT_TYPES,
  type KycAutoRequest, type KycFormRequest, type KycManualRequest, type UploadType,
} from '../provider-api/kyc';
import type { FieldErrors } from './failures';
import type { DocumentRef, HostedKycInput, KycDocuments, ManualKycInput, OnboardCardholderInput, OnboardInput } from './types';

/** The spec's changelog: v1.7.0 (July 2026) deprecated the manual endpoint, removal date 10 August 2026. */
export const MANUAL_KYC_DEPRECATION =
  'POST /kyc/cardholders/manual is deprecated by the provider (v1.7.0, July 2026; removal date 10 August 2026): use the form submission';

export type KycMode = 'form' | 'manual' | 'hosted';

export function kycModeOf(input: OnboardInput): KycMode {
  return input?.mode === 'manual' || input?.mode === 'hosted' ? input.mode : 'form';
}

type ImageSlot = Exclude<keyof KycDocuments, 'attachments'>;

/** Each image document and the form field its fileToken goes in. */
const TOKEN_FIELD: Record<ImageSlot, keyof typeof KYC_IMAGE_SLOTS> = {
  idFront: 'idFrontToken',
  idBack: 'idBackToken',
  selfie: 'selfieToken',
  addressProof: 'addressProofToken',
};

/** Attachments accept any upload type; reports are filed as identity proof. */
const ATTACHMENT_UPLOAD_TYPE: UploadType = 'IDENTITY_PROOF';
const MAX_FILE_NAME = 128;

/** One document to upload: where it sits in the input, and the upload type its slot needs. */
export interface DocumentSlot {
  field: string;
  ref: DocumentRef;
  type: UploadType;
}

/** Every document of the input, image slots first, then the attachments in order. */
export function documentSlots(documents: KycDocuments): DocumentSlot[] {
  const slots: DocumentSlot[] = [];
  for (const [slot, tokenField] of Object.entries(TOKEN_FIELD) as Array<[ImageSlot, keyof typeof KYC_IMAGE_SLOTS]>) {
    const ref = documents[slot];
    if (ref !== undefined) slots.push({ field: `documents.${slot}`, ref, type: KYC_IMAGE_SLOTS[tokenField] });
  }
  (Array.isArray(documents.attachments) ? documents.attachments : []).forEach((ref, i) =>
    slots.push({ field: `documents.attachments.${i}`, ref, type: ATTACHMENT_UPLOAD_TYPE }),
  );
  return slots;
}

/** The form body: the input's fields, with the fileToken of each document (keyed by DocumentSlot.field) in its place. */
export function kycFormBody(input: OnboardCardholderInput, tokens: Record<string, string>): KycFormRequest {
  const body: Record<string, unknown> = formFields(input);
  const documents = isObject(input?.documents) ? (input.documents as KycDocuments) : ({} as KycDocuments);
  for (const [slot, tokenField] of Object.entries(TOKEN_FIELD)) {
    if (tokens[`documents.${slot}`] !== undefined) body[tokenField] = tokens[`documents.${slot}`];
  }
  if (Array.isArray(documents.attachments)) body.attachments = documents.attachments.map((_, i) => tokens[`documents.attachments.${i}`]);
  return body as unknown as KycFormRequest;
}

/** Field errors of any onboarding input, by its mode. */
export function onboardErrors(input: OnboardInput): FieldErrors {
  const mode = kycModeOf(input);
  if (mode === 'manual') return manualKycErrors(input as ManualKycInput);
  if (mode === 'hosted') return kycAutoRequest.errors(hostedKycBody(input as HostedKycInput));
  return onboardCardholderErrors(input as OnboardCardholderInput);
}

/** The manual submission's attachments: PDF reports, uploaded like the form's. */
export function manualDocumentSlots(input: ManualKycInput): DocumentSlot[] {
  const attachments = Array.isArray(input?.documents?.attachments) ? input.documents.attachments : [];
  return attachments.map((ref, i) => ({ field: `documents.attachments.${i}`, ref, type: ATTACHMENT_UPLOAD_TYPE }));
}

export function manualKycBody(input: ManualKycInput, tokens: Record<string, string>): KycManualRequest {
  const { firstName, lastName, idType, idNumber } = input ?? ({} as ManualKycInput);
  return { firstName, lastName, idType, idNumber, attachments: manualDocumentSlots(input).map((s) => tokens[s.field]) } as KycManualRequest;
}

export function hostedKycBody(input: HostedKycInput): KycAutoRequest {
  const { firstName, lastName, email, redirectUrl, extra } = input ?? ({} as HostedKycInput);
  return { firstName, lastName, email, ...(redirectUrl === undefined ? {} : { redirectUrl }), ...(extra === undefined ? {} : { extra }) } as KycAutoRequest;
}

function manualKycErrors(input: ManualKycInput): FieldErrors {
  const slots = manualDocumentSlots(input);
  const placeholders = Object.fromEntries(slots.map((s, i) => [s.field, `placeholder${i}`]));
  const errors: FieldErrors = {};
  for (const [field, rule] of Object.entries(kycManualRequest.errors(manualKycBody(input, placeholders)))) {
    errors[documentField(field)] ??= rule.replace('fileTokens', 'documents');
  }
  for (const slot of slots) {
    Object.assign(errors, documentRefErrors(slot.field, slot.ref));
    if (slot.ref?.contentType !== undefined && slot.ref.contentType !== 'application/pdf') errors[`${slot.field}.contentType`] = 'must be application/pdf (a report)';
  }
  return errors;
}

/** Field errors of an onboardCardholder input, documents named by their place in the input (documents.idBack, …). */
export function onboardCardholderErrors(input: OnboardCardholderInput): FieldErrors {
  const errors: FieldErrors = {};
  const documents = isObject(input?.documents) ? (input.documents as KycDocuments) : undefined;
  if (!documents) errors.documents = 'is required: an object of document references';
  const slots = documents ? documentSlots(documents) : [];
  // Distinct placeholders stand in for the tokens, so that the form's rules judge the documents' presence and count.
  const placeholders = Object.fromEntries(slots.map((s, i) => [s.field, `ftok_placeholder${i}`]));
  for (const [field, rule] of Object.entries(kycFormRequest.errors(kycFormBody(input, placeholders)))) {
    errors[documentField(field)] ??= rule.replace('fileTokens', 'documents');
  }
  for (const slot of slots) Object.assign(errors, documentRefErrors(slot.field, slot.ref));
  return errors;
}

/** A segment of a document's name: no leading dot (no `.`, `..` or hidden files), no separators, no spaces. */
const NAME_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const MAX_NAME = 512;

/**
 * Why `name` cannot name a document in the workers' documents store, or undefined when it can:
 * a relative name of `/`-separated segments, never a path on a worker (absolute, `..`).
 */
export function documentNameRule(name: unknown): string | undefined {
  const rule = `must name a document inside the workers' documents store: 1 to ${MAX_NAME} characters, segments of [A-Za-z0-9._-] separated by /, none starting with a dot (e.g. applicant-42/passport.png), never a path on a worker`;
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME) return rule;
  return name.split('/').every((segment) => NAME_SEGMENT.test(segment)) ? undefined : rule;
}

/** The store's folder of handed-out applicant folders (documents/store.ts handOut): `applicants/<32 hex>`. */
export const HANDED_OUT_FOLDER = 'applicants';
const HANDED_OUT_SCOPE = new RegExp(`^(${HANDED_OUT_FOLDER}/[0-9a-f]{32})/`);

/**
 * The name in the documents store of `file` stored for the onboarding whose workflow ID is
 * `onboardingWorkflowId` (the client's `onboard-cardholder/<idempotencyKey>`; a Nexus caller's
 * `onboard-cardholder/<caller>_<key>`): its own folder, which only that onboarding may read.
 */
export function onboardingDocumentName(onboardingWorkflowId: string, file: string): string {
  return `${onboardingWorkflowId}/${file}`;
}

/**
 * The scope of a document name for the onboarding whose workflow ID is `onboarding`, or undefined
 * when the name is not this onboarding's to use (issue 50: a document is read only for the
 * applicant it was stored for): the onboarding's own folder (its workflow ID), or a folder the
 * documents store handed out (`applicants/<token>`), which the store lets only the first onboarding
 * that uses it read.
 */
export function documentScope(name: string, onboarding: string): { folder: string; handedOut: boolean } | undefined {
  if (onboarding.length > 0 && name.startsWith(`${onboarding}/`)) return { folder: onboarding, handedOut: false };
  const handedOut = HANDED_OUT_SCOPE.exec(name);
  return handedOut ? { folder: handedOut[1], handedOut: true } : undefined;
}

/** The rule a name outside the onboarding's scope breaks (its field: `<document>.name`). */
export function notThisApplicantsRule(onboarding: string): string {
  return `must name a document stored for this applicant (in this onboarding's folder ${onboarding}/ of the documents store, or in a folder the store handed out that no other onboarding used)`;
}

/** Field errors of one document reference: a name inside the workers' documents store, never a path. */
function documentRefErrors(field: string, ref: unknown): FieldErrors {
  if (!isObject(ref)) return { [field]: 'must be a document reference { name, contentType, fileName? }' };
  const r = ref as Partial<DocumentRef> & { path?: unknown };
  const errors: FieldErrors = {};
  if (r.path !== undefined) errors[`${field}.path`] = 'is no longer accepted: name the document inside the workers\' documents store (name), never a path on a worker';
  const rule = documentNameRule(r.name);
  if (rule) errors[`${field}.name`] = rule;
  if (!(UPLOAD_CONTENT_TYPES as readonly unknown[]).includes(r.contentType)) errors[`${field}.contentType`] = `must be one of ${UPLOAD_CONTENT_TYPES.join(', ')}`;
  if (r.fileName !== undefined && (typeof r.fileName !== 'string' || r.fileName.length === 0 || r.fileName.length > MAX_FILE_NAME)) {
    errors[`${field}.fileName`] = `must be a string of 1 to ${MAX_FILE_NAME} characters`;
  }
  return errors;
}

/** The form's own fields: our options and any tokens a caller passed are not the caller's to set. */
function formFields(input: OnboardCardholderInput): Record<string, unknown> {
  const { documents: _documents, timings: _timings, mode: _mode, ...fields } = (input ?? {}) as OnboardCardholderInput & Record<string, unknown>;
  for (const tokenField of [...Object.keys(KYC_IMAGE_SLOTS), 'attachments']) delete fields[tokenField];
  return fields;
}

/** idBackToken → documents.idBack, attachments.2 → documents.attachments.2; other fields unchanged. */
function documentField(field: string): string {
  const slot = (Object.keys(TOKEN_FIELD) as ImageSlot[]).find((s) => TOKEN_FIELD[s] === field);
  if (slot) return `documents.${slot}`;
  return field === 'attachments' || field.startsWith('attachments.') ? `documents.${field}` : field;
}

function isObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
