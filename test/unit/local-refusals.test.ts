/**
 * No local refusal the spec does not state (issue 21): what the spec forbids is refused before
 * sending, naming the field and the rule; what it does not forbid goes to the provider.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createKycActivities } from '../../src/activities/kyc';
import { kycFormRequest } from '../../src/provider-api/kyc';
import type { ProviderClient } from '../../src/provider/client';
import { DocumentStore } from '../../src/documents/store';
import { SAMPLE_PNG } from '../../src/sandbox/kyc-samples';
import type { DocumentRef } from '../../src/shared/types';

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
  const { inspectKycDocuments } = createKycActivities({ provider: {} as ProviderClient, documents: new DocumentStore(dir), temporal: {} as never, openItemMinAskMs: 60_000 });
  // Every name below is in this onboarding's own folder (its workflow ID): the store reads nothing else for it.
  const onboarding = 'onboard-cardholder/local-refusals';
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: onboarding, runId: 'run' } });
  const inspect = (name: string, contentType: DocumentRef['contentType']): Promise<Record<string, string>> =>
    env.run(inspectKycDocuments, { documents: [{ field: 'documents.idFront', ref: { name: `${onboarding}/${name}`, contentType } }] }) as Promise<Record<string, string>>;
  mkdirSync(join(dir, onboarding), { recursive: true });

  it('a document of the declared type inside the store passes; a missing one is refused', async () => {
    writeFileSync(join(dir, onboarding, 'report.pdf'), '%PDF-1.7\n');
    expect(await inspect('report.pdf', 'application/pdf')).toEqual({});
    expect(await inspect('missing.png', 'image/png')).toEqual({ 'documents.idFront': 'must name a readable file in the documents store' });
  });

  it('an empty file is refused: its bytes are not the declared type', async () => {
    writeFileSync(join(dir, onboarding, 'empty.pdf'), '');
    expect((await inspect('empty.pdf', 'application/pdf'))['documents.idFront']).toMatch(/must be a PDF document/);
  });

  it('a file over 10 MB is refused while it is read', async () => {
    writeFileSync(join(dir, onboarding, 'big.png'), Buffer.concat([SAMPLE_PNG, Buffer.alloc(10 * 1024 * 1024)]));
    expect(await inspect('big.png', 'image/png')).toEqual({ 'documents.idFront': 'must be a file of at most 10485760 bytes' });
  });

  it('a folder is not a document', async () => {
    mkdirSync(join(dir, onboarding, 'folder'), { recursive: true });
    expect((await inspect('folder', 'image/png'))['documents.idFront']).toMatch(/regular file|readable file/);
  });

  describe('a FIFO in the store', () => {
    const fifo = join(dir, onboarding, 'pipe.png');
    // Had the open waited for a writer, this lets it go (the thread it holds would keep jest from exiting).
    afterAll(() => {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // ENXIO: nobody is waiting to read it, as it should be.
      }
    });

    it('is refused at once, without waiting for a writer', async () => {
      execFileSync('mkfifo', [fifo]);
      expect(await inspect('pipe.png', 'image/png')).toEqual({
        'documents.idFront': 'must name a regular file in the documents store (a FIFO, socket, device or folder is refused)',
      });
    }, 3000);
  });
});
