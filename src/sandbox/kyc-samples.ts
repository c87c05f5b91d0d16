/**
 * A KYC submission the sandbox approves, and sample documents for it: for the demo, for tests and
 * for anyone developing against the sandbox. The bytes are just what the sandbox checks (a PNG
 * signature, a PDF header). A document is read only for the applicant it was stored for
 * (documents/store.ts): the samples live in folders the store hands out, and each sample form is a
 * new applicant with its own copies.
 */
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config';
import { DocumentStore } from '../documents/store';
import { documentNameRule } from '../shared/kyc-rules';
import type { DocumentRef, KycDocuments, OnboardCardholderInput } from '../shared/types';

export const SAMPLE_PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]);
export const SAMPLE_PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');

/** The documents store of this environment (KYC_DOCUMENTS_DIR), as the workers started from it read it. */
export function documentsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return loadConfig(env).documentsDir;
}

/**
 * A fresh folder the documents store hands out (its absolute path), for one applicant's documents:
 * the first onboarding that uploads one of them makes the folder its own.
 */
export function sampleFolder(root = documentsRoot()): string {
  return join(root, new DocumentStore(root).handOut());
}

/** Writes a document into `dir`, a folder inside the documents store, and returns its reference by name (never by path). */
export function writeDocument(dir: string, name: string, bytes: Buffer, contentType: DocumentRef['contentType'], root = documentsRoot()): DocumentRef {
  const inStore = relative(root, join(dir, name)).split(sep).join('/');
  new DocumentStore(root).write(inStore, bytes);
  return { name: inStore, contentType, fileName: name };
}

/** A passport front, a selfie and one verification report, in a fresh folder the documents store hands out (or `dir`, inside the store). */
export function writeSampleDocuments(dir = sampleFolder()): { dir: string; documents: KycDocuments } {
  return {
    dir,
    documents: {
      idFront: writeDocument(dir, 'passport.png', SAMPLE_PNG, 'image/png'),
      selfie: writeDocument(dir, 'selfie.png', SAMPLE_PNG, 'image/png'),
      attachments: [writeDocument(dir, 'verification-report.pdf', SAMPLE_PDF, 'application/pdf')],
    },
  };
}

/**
 * A valid form of a new applicant; `idNumber` starting REJECT is rejected at review (CONTRACTS §5); a
 * fresh one avoids the duplicate rule. Its documents are copies of `documents` in a new folder the
 * store hands out, so that one set of samples serves any number of forms (each onboarding reads only
 * its own applicant's); a document that is not a regular file of the store is named as given (a test
 * of a refusal). Documents in `overrides` are named as given.
 */
export function sampleKycForm(documents: KycDocuments, overrides: Partial<OnboardCardholderInput> = {}, root = documentsRoot()): OnboardCardholderInput {
  return {
    firstName: 'Ada',
    lastName: 'Lovelace',
    fullName: 'Ada Lovelace',
    fullNameEn: 'Ada Lovelace',
    mobilePrefix: '44',
    mobile: '7700900123',
    email: 'ada@example.com',
    gender: 'FEMALE',
    birthDate: '1990-12-10',
    occupation: 'FREELANCER',
    nationality: 'GB',
    idType: 'PASSPORT',
    idNumber: `P${randomBytes(6).toString('hex')}`,
    idExpiryDate: `${new Date().getUTCFullYear() + 8}-01-01`,
    country: 'GB',
    state: 'London',
    city: 'London',
    street: '12 Analytical Row',
    address: '12 Analytical Row, London',
    addressEn: '12 Analytical Row, London',
    postalCode: 'N1 1AA',
    sourceOfFund: 'SALARY_OR_EMPLOYMENT_INCOME',
    livingCountry: 'GB',
    documents: forNewApplicant(documents, root),
    ...overrides,
  };
}

/** `documents` copied into a folder handed out for one new applicant (each file once, under its own last segment). */
function forNewApplicant(documents: KycDocuments, root: string): KycDocuments {
  if (typeof documents !== 'object' || documents === null) return documents;
  const store = new DocumentStore(root);
  let folder: string | undefined;
  const copies = new Map<string, string>();
  const copy = (ref: DocumentRef): DocumentRef => {
    if (typeof ref?.name !== 'string' || documentNameRule(ref.name) !== undefined) return ref;
    const from = join(root, ref.name);
    // A link (on the way or at the end), a FIFO or a folder stays as named, for the worker to refuse.
    if (!lstatSync(from, { throwIfNoEntry: false })?.isFile() || realpathSync(from) !== join(realpathSync(root), ref.name)) return ref;
    let name = copies.get(ref.name);
    if (name === undefined) {
      folder ??= store.handOut();
      const file = basename(ref.name);
      name = `${folder}/${[...copies.values()].some((n) => n.endsWith(`/${file}`)) ? `${copies.size}-` : ''}${file}`;
      store.write(name, readFileSync(from));
      copies.set(ref.name, name);
    }
    return { ...ref, name };
  };
  const copied: Record<string, unknown> = {};
  for (const [slot, value] of Object.entries(documents)) copied[slot] = Array.isArray(value) ? value.map(copy) : copy(value as DocumentRef);
  return copied as unknown as KycDocuments;
}
