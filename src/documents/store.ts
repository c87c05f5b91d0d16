/**
 * The documents store: the one folder (KYC_DOCUMENTS_DIR) from which the workers upload KYC
 * documents. A caller names a document inside it (DocumentRef.name); it never names a path on a
 * worker. Whatever the name, only a regular file whose real path lies inside the store's real
 * root is read, the size is enforced while reading (not only by a stat before it) and the bytes
 * must be what the declared content type says (magic numbers), so a worker never uploads its own
 * secrets (/proc/self/environ, a TLS key) or a file a symlink points at outside the store.
 *
 * A document is read only for the applicant it was stored for (issue 50): an onboarding reads a name
 * only inside its own scope (kyc-rules.ts documentScope), the folder named by its workflow ID
 * (`onboard-cardholder/<key>/…`) or a folder the store handed out (`applicants/<token>/…`, handOut),
 * which the first onboarding to use it claims (a `.onboarding` file in it, unreachable by any name:
 * no segment starts with a dot). So team B's onboarding naming team A's applicant's passport is
 * refused, whatever it knows of the name, before anything is read.
 */
import { randomBytes } from 'node:crypto';
import { constants, mkdirSync, writeFileSync } from 'node:fs';
import { open, readFile, realpath, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { MAX_UPLOAD_BYTES } from '../provider/uploads';
import { HANDED_OUT_FOLDER, documentNameRule, documentScope, notThisApplicantsRule } from '../shared/kyc-rules';
import type { DocumentRef } from '../shared/types';


/** The first bytes each content type the provider takes must start with. */
const MAGIC: Record<DocumentRef['contentType'], { bytes: Buffer; label: string }> = {
  'image/png': { bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), label: 'a PNG image (its bytes must start with the PNG signature)' },
  'image/jpeg': { bytes: Buffer.from([0xff, 0xd8, 0xff]), label: 'a JPEG image (its bytes must start with FF D8 FF)' },
  'application/pdf': { bytes: Buffer.from('%PDF-'), label: 'a PDF document (its bytes must start with %PDF-)' },
};

const NOT_REGULAR = 'must name a regular file in the documents store (a FIFO, socket, device or folder is refused)';
/** In a handed-out folder: the workflow ID of the onboarding that claimed it. */
const CLAIM_FILE = '.onboarding';

/**
 * Why a document cannot be read; its `rule` is what a field error says (never the document's content
 * or the store's path). `ofName`: the name is not this onboarding's to use (its `name` field is at fault).
 */
export class DocumentRefused extends Error {
  constructor(
    readonly rule: string,
    readonly ofName = false,
  ) {
    super(`document ${ofName ? 'name ' : ''}${rule}`);
  }
}

export class DocumentStore {
  readonly #root: string;

  /** @param root the store's folder (KYC_DOCUMENTS_DIR); it need not exist yet (then no document does). */
  constructor(root: string) {
    this.#root = root;
  }

  get root(): string {
    return this.#root;
  }

  /**
   * The document's bytes, once every rule above holds, for the onboarding whose workflow ID is
   * `onboarding` (a handed-out folder no onboarding claimed yet is claimed by it); throws DocumentRefused otherwise.
   */
  async read(name: string, contentType: DocumentRef['contentType'], onboarding: string): Promise<Buffer> {
    const { path, scope } = await this.#resolve(name, onboarding);
    if (scope.handedOut) await this.#claim(scope.path, onboarding);
    return this.#readFile(path, contentType);
  }

  async #readFile(path: string, contentType: DocumentRef['contentType']): Promise<Buffer> {
    // O_NONBLOCK: opening a FIFO without a writer would hold a thread of libuv's small pool until one
    // came (a few such names would stall every fs call of the worker); it changes nothing for a regular file.
    const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch(() => {
      throw new DocumentRefused('must name a readable file in the documents store');
    });
    try {
      // fstat of what was opened, not stat of the path: the path may have been swapped since.
      if (!(await handle.stat()).isFile()) throw new DocumentRefused(NOT_REGULAR);
      const bytes = await readCapped(handle, MAX_UPLOAD_BYTES);
      assertContentType(bytes, contentType);
      return bytes;
    } finally {
      await handle.close();
    }
  }

  /**
   * Why the document cannot be uploaded by the onboarding `onboarding`, or undefined when it can (the
   * same checks as read, the bytes read and dropped; nothing is claimed: see claim).
   */
  async inspect(name: string, contentType: DocumentRef['contentType'], onboarding: string): Promise<DocumentRefused | undefined> {
    try {
      const { path, scope } = await this.#resolve(name, onboarding);
      if (scope.handedOut) await this.#claimedBy(scope.path, onboarding);
      await this.#readFile(path, contentType);
      return undefined;
    } catch (err) {
      if (err instanceof DocumentRefused) return err;
      throw err;
    }
  }

  /**
   * Claims the handed-out folder of `name` (if it is in one) for the onboarding `onboarding`; a
   * refusal when another one claimed it meanwhile. Called once all of an onboarding's documents
   * passed inspect, so that an onboarding refused in part claims nothing.
   */
  async claim(name: string, onboarding: string): Promise<DocumentRefused | undefined> {
    try {
      const { scope } = await this.#resolve(name, onboarding);
      if (scope.handedOut) await this.#claim(scope.path, onboarding);
      return undefined;
    } catch (err) {
      if (err instanceof DocumentRefused) return err;
      throw err;
    }
  }

  /**
   * A new folder for one applicant's documents (`applicants/<128-bit token>`, its name in the
   * store): for a writer that does not yet know the key its onboarding will start under. The first
   * onboarding that uses a document in it claims it; no other onboarding can read from it after.
   */
  handOut(): string {
    const folder = `${HANDED_OUT_FOLDER}/${randomBytes(16).toString('hex')}`;
    mkdirSync(join(this.#root, folder), { recursive: true, mode: 0o700 });
    return folder;
  }

  /**
   * Writes a document under `name` (the caller's side of the store: the CLI, the samples); returns
   * its name. Write it under the folder of its onboarding (kyc-rules.ts onboardingDocumentName) or a
   * folder handOut gave: any other name no onboarding may read.
   */
  write(name: string, bytes: Buffer): string {
    const rule = documentNameRule(name);
    if (rule) throw new DocumentRefused(rule);
    const path = join(this.#root, name);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, bytes, { mode: 0o600 });
    return name;
  }

  /**
   * The real path of `name` and its scope's, refused unless the name lies in the onboarding's scope,
   * the scope's folder is itself (no link on the way to it: `onboard-cardholder/B` linked to A's folder
   * would be A's) and the file's real path lies inside the scope's (a link may point elsewhere in the
   * applicant's folder, never out of it).
   */
  async #resolve(name: string, onboarding: string): Promise<{ path: string; scope: { path: string; handedOut: boolean } }> {
    const rule = documentNameRule(name);
    if (rule) throw new DocumentRefused(rule);
    const scope = documentScope(name, onboarding);
    if (!scope) throw new DocumentRefused(notThisApplicantsRule(onboarding), true);
    let root: string;
    let scopePath: string;
    let path: string;
    try {
      root = await realpath(this.#root);
      scopePath = await realpath(join(root, scope.folder));
      path = await realpath(join(root, name));
    } catch {
      throw new DocumentRefused('must name a readable file in the documents store');
    }
    if (scopePath !== join(root, scope.folder)) throw new DocumentRefused(`${notThisApplicantsRule(onboarding)}: its folder is a link`, true);
    if (!path.startsWith(root + sep)) throw new DocumentRefused('must name a file inside the documents store (a link out of it is refused)');
    if (!path.startsWith(scopePath + sep)) throw new DocumentRefused(`${notThisApplicantsRule(onboarding)}: it links out of the applicant's folder`, true);
    return { path, scope: { path: scopePath, handedOut: scope.handedOut } };
  }

  /** Refused unless the handed-out folder is unclaimed or claimed by `onboarding`. */
  async #claimedBy(scopePath: string, onboarding: string): Promise<void> {
    const owner = await readFile(join(scopePath, CLAIM_FILE), 'utf8').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
    if (owner !== undefined && owner !== onboarding) throw new DocumentRefused(`${notThisApplicantsRule(onboarding)}: another onboarding uses its folder`, true);
  }

  /** Claims the handed-out folder for `onboarding` (exclusive create: of two at once, one wins), or refuses when another has it. */
  async #claim(scopePath: string, onboarding: string): Promise<void> {
    try {
      await writeFile(join(scopePath, CLAIM_FILE), onboarding, { flag: 'wx', mode: 0o600 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return this.#claimedBy(scopePath, onboarding);
      // Not a transient fault to retry: the deployment's (a read-only mount) or the writer's, told to the caller.
      throw new DocumentRefused(`is in a folder the documents store handed out, which this worker cannot claim for this onboarding (${code ?? 'error'}): the workers need write access to KYC_DOCUMENTS_DIR for handed-out folders; or store the document under the onboarding's own folder`, true);
    }
  }
}

/** Reads at most `max` bytes; a file that has more is refused without reading the rest. */
async function readCapped(handle: FileHandle, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  const chunk = Buffer.alloc(64 * 1024);
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    total += bytesRead;
    if (total > max) throw new DocumentRefused(`must be a file of at most ${max} bytes`);
    chunks.push(Buffer.from(chunk.subarray(0, bytesRead)));
  }
}

function assertContentType(bytes: Buffer, contentType: DocumentRef['contentType']): void {
  const magic = MAGIC[contentType];
  if (!magic) throw new DocumentRefused('must declare a content type the provider takes');
  if (bytes.length < magic.bytes.length || !bytes.subarray(0, magic.bytes.length).equals(magic.bytes)) {
    throw new DocumentRefused(`must be ${magic.label}, as its contentType ${contentType} says`);
  }
}
