/**
 * A KYC submission the sandbox approves, and sample documents for it: for the demo, for tests and
 * for anyone developing against the sandbox. The bytes are just what the sandbox checks (a PNG
 * signature, a PDF header).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config';
import { DocumentStore } from '../documents/store';
import type { DocumentRef, KycDocuments, OnboardCardholderInput } from '../shared/types';

export const SAMPLE_PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]);
export const SAMPLE_PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');

/** The documents store of this environment (KYC_DOCUMENTS_DIR), as the workers started from it read it. */
export function documentsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return loadConfig(env).documentsDir;
}

/** A fresh folder inside the documents store (its absolute path), for one caller's documents. */
export function sampleFolder(prefix = 'kyc-samples', root = documentsRoot()): string {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  return mkdtempSync(join(root, `${prefix}-`));
}

/** Writes a document into `dir`, a folder inside the documents store, and returns its reference by name (never by path). */
export function writeDocument(dir: string, name: string, bytes: Buffer, contentType: DocumentRef['contentType'], root = documentsRoot()): DocumentRef {
  const inStore = relative(root, join(dir, name)).split(sep).join('/');
  new DocumentStore(root).write(inStore, bytes);
  return { name: inStore, contentType, fileName: name };
}

/** A passport front, a selfie and one verification report, in a fresh folder of the documents store (or `dir`, inside it). */
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

/** A valid form; `idNumber` starting REJECT is rejected at review (CONTRACTS §5); a fresh one avoids the duplicate rule. */
export function sampleKycForm(documents: KycDocuments, overrides: Partial<OnboardCardholderInput> = {}): OnboardCardholderInput {
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
    documents,
    ...overrides,
  };
}
