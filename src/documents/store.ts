/**
 * The documents store: the one folder (KYC_DOCUMENTS_DIR) from which the workers upload KYC
 * documents. A caller names a document inside it (DocumentRef.name); it never names a path on a
 * worker. Whatever the name, only a regular file whose real path lies inside the store's real
 * root is read, the size is enforced while reading (not only by a stat before it) and the bytes
 * must be what the declared content type says (magic numbers), so a worker never uploads its own
 * secrets (/proc/self/environ, a TLS key) or a file a symlink points at outside the store.
 */
import { constants, mkdirSync, writeFileSync } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { MAX_UPLOAD_BYTES } from '../provider/uploads';
import { documentNameRule } from '../shared/kyc-rules';
import type { DocumentRef } from '../shared/types';


/** The first bytes each content type the provider takes must start with. */
const MAGIC: Record<DocumentRef['contentType'], { bytes: Buffer; label: string }> = {
  'image/png': { bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), label: 'a PNG image (its bytes must start with the PNG signature)' },
  'image/jpeg': { bytes: Buffer.from([0xff, 0xd8, 0xff]), label: 'a JPEG image (its bytes must start with FF D8 FF)' },
  'application/pdf': { bytes: Buffer.from('%PDF-'), label: 'a PDF document (its bytes must start with %PDF-)' },
};

const NOT_REGULAR = 'must name a regular file in the documents store (a FIFO, socket, device or folder is refused)';

/** Why a document cannot be read; its `rule` is what a field error says (never the document's content or the store's path). */
export class DocumentRefused extends Error {
  constructor(readonly rule: string) {
    super(`document ${rule}`);
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

  /** The document's bytes, once every rule above holds; throws DocumentRefused otherwise. */
  async read(name: string, contentType: DocumentRef['contentType']): Promise<Buffer> {
    const path = await this.#resolve(name);
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

  /** Why the document cannot be uploaded, or undefined when it can (the same checks as read, the bytes read and dropped). */
  async inspect(name: string, contentType: DocumentRef['contentType']): Promise<string | undefined> {
    try {
      await this.read(name, contentType);
      return undefined;
    } catch (err) {
      if (err instanceof DocumentRefused) return err.rule;
      throw err;
    }
  }

  /** Writes a document under `name` (the caller's side of the store: the CLI, the samples); returns its name. */
  write(name: string, bytes: Buffer): string {
    const rule = documentNameRule(name);
    if (rule) throw new DocumentRefused(rule);
    const path = join(this.#root, name);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, bytes, { mode: 0o600 });
    return name;
  }

  /** The real path of `name`, refused unless it lies inside the store's real root. */
  async #resolve(name: string): Promise<string> {
    const rule = documentNameRule(name);
    if (rule) throw new DocumentRefused(rule);
    let root: string;
    let path: string;
    try {
      root = await realpath(this.#root);
      path = await realpath(join(root, name));
    } catch {
      throw new DocumentRefused('must name a readable file in the documents store');
    }
    // A symlink inside the store may point elsewhere in it, never out of it.
    if (!path.startsWith(root + sep)) throw new DocumentRefused('must name a file inside the documents store (a link out of it is refused)');
    return path;
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
