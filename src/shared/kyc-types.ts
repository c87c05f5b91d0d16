/**
 * onboardCardholder's inputs and results (docs/contracts.md, section 7): the KYC form with documents
 * from the workers' documents store, the deprecated manual submission, the hosted flow, and where an
 * onboarding stands. Re-exported by types.ts.
 */
import type { KycFormFields } from '../provider-api/kyc';
import type { WaitTimings } from './types';

/**
 * A document in the workers' documents store (KYC_DOCUMENTS_DIR): its bytes never enter workflow
 * history, and a caller names it inside the store, never as a path on a worker.
 */
export interface DocumentRef {
  /** Its name inside the store: segments of [A-Za-z0-9._-] separated by /, e.g. applicant-42/passport.png. */
  name: string;
  /** What the bytes are; the worker checks them against it (magic numbers) before the upload. */
  contentType: 'image/png' | 'image/jpeg' | 'application/pdf';
  /** The name the provider records; defaults to the name's last segment. */
  fileName?: string;
}

/** The documents of a KYC form submission, each named in the workers' documents store. */
export interface KycDocuments {
  /** The identity document's front (upload type IDENTITY_PROOF). */
  idFront: DocumentRef;
  /** Its back: required for an ID_CARD. */
  idBack?: DocumentRef;
  /** Optional (SELFIE_PROOF). */
  selfie?: DocumentRef;
  /** Optional (ADDRESS_PROOF). */
  addressProof?: DocumentRef;
  /** Third-party verification reports, 1 to 6. */
  attachments: DocumentRef[];
}

/** The KYC form's fields (POST /kyc/cardholders/form) with documents in place of fileTokens. */
export interface OnboardCardholderInput extends KycFormFields {
  /** The form submission (the default). */
  mode?: 'form';
  /** The documents, named in the workers' documents store (never bytes). */
  documents: KycDocuments;
  /** the flow's waits (webhook, polling, deadline); the defaults suit production, tests shorten them. */
  timings?: WaitTimings;
}

/** The deprecated manual submission (POST /kyc/cardholders/manual): identity and PDF reports only. */
export interface ManualKycInput {
  /** The deprecated manual submission (removal 10 August 2026). */
  mode: 'manual';
  /** Up to 128 characters. */
  firstName: string;
  /** Up to 128 characters. */
  lastName: string;
  /** PASSPORT, ID_CARD or DRIVER_LICENSE. */
  idType: string;
  /** Up to 128 characters. */
  idNumber: string;
  /** PDF reports of a third-party verification provider, at least one. */
  documents: { attachments: DocumentRef[] };
  /** the flow's waits (webhook, polling, deadline); the defaults suit production, tests shorten them. */
  timings?: WaitTimings;
}

/** The hosted flow (POST /kyc/cardholders/auto, shape not shown: docs/provider-fidelity.md): the person verifies on the provider's page. */
export interface HostedKycInput {
  /** The provider's hosted flow: the person verifies on its page (`verificationUrl`). */
  mode: 'hosted';
  /** The applicant's first name. */
  firstName: string;
  /** The applicant's last name. */
  lastName: string;
  /** The applicant's email. */
  email: string;
  /** Where the provider's page sends the person when done. */
  redirectUrl?: string;
  /** The spec shows no shape for POST /kyc/cardholders/auto: fields we do not model, sent as they are. */
  extra?: Record<string, unknown>;
  /** the flow's waits (webhook, polling, deadline); the defaults suit production, tests shorten them. */
  timings?: WaitTimings;
}

/** onboardCardholder's input: the form (default), the deprecated manual submission, or the hosted flow. */
export type OnboardInput = OnboardCardholderInput | ManualKycInput | HostedKycInput;

/** A reviewed cardholder: REJECTED is a result (with the provider's reason), not a failure. */
export interface OnboardCardholderResult {
  /** The KYC cardholder (`kyc_…`). */
  id: string;
  /** The review's outcome. */
  kycStatus: 'APPROVED' | 'REJECTED';
  /** The provider's reason when REJECTED. */
  reason?: string;
  /** The hosted flow's page, where the person verified. */
  verificationUrl?: string;
  /** E.g. the manual submission's deprecation. */
  warnings?: string[];
}

/** Where an onboarding stands before the review (query `onboarding`): the hosted flow's page is here as soon as it is known. */
export interface OnboardingProgress {
  /** How the onboarding submits. */
  mode: 'form' | 'manual' | 'hosted';
  /** The KYC cardholder once the submission recorded it. */
  cardholderId?: string;
  /** The hosted flow's page, as soon as it is known. */
  verificationUrl?: string;
  /** E.g. the manual submission's deprecation. */
  warnings: string[];
}
