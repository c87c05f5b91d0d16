/**
 * Certificate rotation without a restart. cert-manager and Kubernetes replace a mounted Secret's
 * files in place (an atomic symlink swap), but a gRPC connection keeps the certificates it was
 * opened with, so a process that read them once fails its handshakes after the old ones expire.
 * This watches the files the Temporal connection uses and tells the process when their content
 * changed; the process then opens a new connection (the worker drains and reconnects, the bridge
 * swaps its client).
 */
import { createHash } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Config } from '../config';

/** Polling, not inotify: a symlink swap is seen through `stat`, and 30 s is far inside any rotation's overlap. */
const DEFAULT_INTERVAL_MS = 30_000;

export function certificatePaths(t: Config['temporal']): string[] {
  return [t.tlsCaPath, t.tlsCertPath, t.tlsKeyPath].filter((p): p is string => Boolean(p));
}

/** Calls `onChange` once per change of the files' content; returns the function that stops watching. */
export function watchCertificates(t: Config['temporal'], onChange: () => void, intervalMs = DEFAULT_INTERVAL_MS): () => void {
  const paths = certificatePaths(t);
  if (paths.length === 0) return () => undefined;
  let seen = digest(paths);
  const check = () => {
    const now = digest(paths);
    if (now === undefined || now === seen) return; // mid-swap (a file missing): the next stat sees the whole set
    seen = now;
    onChange();
  };
  for (const path of paths) watchFile(path, { interval: intervalMs, persistent: false }, check);
  return () => paths.forEach((path) => unwatchFile(path, check));
}

function digest(paths: string[]): string | undefined {
  const hash = createHash('sha256');
  try {
    for (const path of paths) hash.update(readFileSync(path));
  } catch {
    return undefined;
  }
  return hash.digest('hex');
}
