/**
 * A KYC submission the sandbox approves, and sample documents for it: for the demo, for tests and
 * for anyone developing against the sandbox. The bytes are just what the sandbox checks (a PNG
 * signature, a PDF header).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { DocumentRef, KycDocuments, OnboardCardholderInput } from '../shared/types';

export const SAMPLE_PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]);
export const SAMPLE_PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');

/** Writes a file into `dir` and returns its reference (documents travel by reference, never as bytes in history). */
export function writeDocument(dir: string, name: string, bytes: Buffer, contentType: DocumentRef['contentType']): DocumentRef {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return { path, contentType, fileName: name };
}

/** A passport front, a selfie and one verification report, in a fresh temporary folder (or `dir`). */
export function writeSampleDocuments(dir = mkdtempSync(join(tmpdir(), 'kyc-samples-'))): { dir: string; documents: KycDocuments } {
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
