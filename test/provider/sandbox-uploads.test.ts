/** KYC document upload against the sandbox: the size limit before any request, and an expired URL. */
import { MAX_UPLOAD_BYTES, uploadDocument, type PresignedUploadSource } from '../../src/provider/uploads';
import { failureOf, sleep, startHarness, type SandboxHarness } from './helpers/sandbox';

let h: SandboxHarness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.control.reset());

const pdf = (bytes: Buffer) => ({ fileName: 'report.pdf', contentType: 'application/pdf' as const, type: 'IDENTITY_PROOF' as const, bytes });

it('uploads a file and its token is accepted by a submission', async () => {
  const client = h.client();
  const token = await uploadDocument(client, pdf(Buffer.from('%PDF-1.4 small')));
  await expect(client.submitKycManual({ firstName: 'Ada', lastName: 'Lovelace', idType: 'PASSPORT', idNumber: 'P7654321', attachments: [token] })).resolves.toMatchObject({ kycStatus: 'PENDING', mode: 'MANUAL' });
});

it('refuses an 11 MB file as FileTooLarge before any request', async () => {
  const client = h.client();
  const before = await h.control.endpointStats('createPresignedUpload');
  const err = await failureOf(uploadDocument(client, pdf(Buffer.alloc(11 * 1024 * 1024))));
  expect(err).toMatchObject({ type: 'FileTooLarge', retryable: false, mayHaveTakenEffect: false });
  expect(await h.control.endpointStats('createPresignedUpload')).toEqual(before);
  expect((await h.control.endpointStats('upload')).requests).toBe(0);
});

it('accepts exactly 10 MB', async () => {
  const token = await uploadDocument(h.client(), pdf(Buffer.alloc(MAX_UPLOAD_BYTES, 0x25)));
  expect(token).toMatch(/^ftok_/);
});

it('asks for a new URL once when the first has expired, and the new token works', async () => {
  const config = await h.control.configure({ uploadExpiresInSec: 1 });
  expect(config.uploadExpiresInSec).toBe(1);
  const client = h.client();
  // The first URL is handed over just after it expired, as after a slow disk read.
  let calls = 0;
  const slowFirst: PresignedUploadSource = {
    // The sandbox's upload URLs are on its own (http, loopback) origin: only the provider's own origin may be so.
    origin: client.origin,
    async createPresignedUpload(body) {
      const upload = await client.createPresignedUpload(body);
      if (++calls === 1) await sleep(1100);
      return upload;
    },
  };
  const token = await uploadDocument(slowFirst, pdf(Buffer.from('%PDF-1.4 expired once')));

  expect((await h.control.endpointStats('createPresignedUpload')).requests).toBe(2);
  expect((await h.control.endpointStats('upload')).byStatus).toEqual({ 200: 1, 410: 1 });
  await expect(client.submitKycManual({ firstName: 'Ada', lastName: 'Lovelace', idType: 'PASSPORT', idNumber: 'P1111111', attachments: [token] })).resolves.toMatchObject({ kycStatus: 'PENDING' });
});
