/**
 * No local refusal the spec does not state (issue 21): what the spec forbids is refused before
 * sending, naming the field and the rule; what it does not forbid goes to the provider.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKycActivities } from '../../src/activities/kyc';
import { kycFormRequest } from '../../src/provider/api/kyc';
import type { ProviderClient } from '../../src/provider/client';

const form = (tokens: Record<string, unknown>) => ({
  firstName: 'Ada', lastName: 'Lovelace', fullName: 'Ada Lovelace', fullNameEn: 'Ada Lovelace', mobilePrefix: '44', mobile: '7700900123',
  email: 'ada@example.com', gender: 'FEMALE', birthDate: '1990-12-10', occupation: 'FREELANCER', nationality: 'GB', idType: 'PASSPORT',
  idNumber: 'P1234567', idExpiryDate: '2099-01-01', country: 'GB', state: 'London', city: 'London', street: '1 Main St', address: '1 Main St',
  addressEn: '1 Main St', postalCode: 'N1 1AA', sourceOfFund: 'SALARY_OR_EMPLOYMENT_INCOME', livingCountry: 'GB', ...tokens,
});

describe('repeated fileTokens: only the spec two rules', () => {
  it('the same token twice among the attachments is the provider to judge', () => {
    expect(kycFormRequest.errors(form({ idFrontToken: 'tok_front', attachments: ['tok_report', 'tok_report'] }))).toEqual({});
  });

  it('"the same token cannot be used in two image slots"', () => {
    expect(kycFormRequest.errors(form({ idFrontToken: 'tok_a', selfieToken: 'tok_a', attachments: ['tok_r'] }))).toEqual({ selfieToken: 'must not repeat the token of idFrontToken' });
  });

  it('"a token already used in an image slot cannot repeat here" (attachments)', () => {
    expect(kycFormRequest.errors(form({ idFrontToken: 'tok_a', attachments: ['tok_r', 'tok_a'] }))).toEqual({ 'attachments.1': 'must not repeat the token of idFrontToken' });
  });
});

describe('documents checked before the first upload', () => {
  const dir = mkdtempSync(join(tmpdir(), 'local-refusals-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const { inspectKycDocuments } = createKycActivities({ provider: {} as ProviderClient });

  it('an empty file is not refused (the spec states a maximum of 10 MB, no minimum); a missing one is', async () => {
    const empty = join(dir, 'empty.pdf');
    writeFileSync(empty, '');
    expect(await inspectKycDocuments({ documents: [{ field: 'documents.attachments.0', path: empty }] })).toEqual({});
    expect(await inspectKycDocuments({ documents: [{ field: 'documents.idFront', path: join(dir, 'missing.png') }] })).toEqual({ 'documents.idFront': 'must be a readable file' });
  });
});
