/**
 * One of the image's processes run from an install directory with plain `node`, for the dist
 * check (tools/dist-check.ts). A `--require` hook inside the install records, at exit, every
 * module file the process loaded; `loadedOutside()` names those that did not come from the
 * install (a development dependency found in a parent's node_modules, the clone's sources).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const HOOK = `'use strict';
// Written by tools/dist-process.ts: lists the files this process loaded, at exit.
process.on('exit', () => {
  require('node:fs').writeFileSync(process.env.DIST_CHECK_LOADED, JSON.stringify(Object.keys(require.cache)));
});
`;

export interface DistProcess {
  name: string;
  /** Resolves when it is ready (its health URL answers 200, and its output holds `readyLine` when given); rejects when it exits first or after 90 s. */
  ready(): Promise<void>;
  /** Rejects as soon as the process exits unasked (a crash mid-run), naming it with its output's end. */
  died(): Promise<never>;
  /** SIGTERM and wait (SIGKILL after 30 s). */
  stop(): Promise<void>;
  stoppedCleanly(): boolean;
  loadedOutside(): string[];
  /** The end of its output, for a failure's message. */
  tail(): string;
}

export function startDistProcess(dir: string, node: string, name: string, entry: string, env: Record<string, string>, healthUrl: string, readyLine?: string): DistProcess {
  const hook = join(dir, '.dist-check-hook.js');
  if (!existsSync(hook)) writeFileSync(hook, HOOK);
  const loadedFile = join(dir, `.loaded-${name.replace(/\W+/g, '-')}.json`);
  // Only what the image sets: no NODE_OPTIONS, NODE_PATH or tsx loader from the caller's environment.
  const child = spawn(node, ['--require', hook, entry], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, NODE_ENV: 'production', DIST_CHECK_LOADED: loadedFile, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = `${output}${chunk.toString()}`.slice(-4000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exitCode: number | null | undefined;
  let signal: NodeJS.Signals | null = null;
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, sig) => {
      exitCode = code;
      signal = sig;
      resolve();
    }),
  );
  const died = exited.then(() => {
    if (!stopping) throw new Error(`${name} exited (${exitCode ?? signal}) during the check: ${output.trim().slice(-1500)}`);
    return new Promise<never>(() => undefined);
  });
  died.catch(() => undefined); // observed through died() only
  return {
    name,
    async ready() {
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline) {
        if (exitCode !== undefined) throw new Error(`${name} exited (${exitCode ?? signal}) before it was ready: ${output.trim().slice(-1500)}`);
        const ok = await fetch(healthUrl).then((r) => r.ok, () => false);
        if (ok && (readyLine === undefined || output.includes(readyLine))) return;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`${name} was not ready within 90 s: ${output.trim().slice(-1500)}`);
    },
    died: () => died,
    async stop() {
      stopping = true;
      if (exitCode !== undefined) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(killer);
    },
    stoppedCleanly: () => exitCode === 0 || (exitCode === null && signal === 'SIGTERM'),
    loadedOutside() {
      if (!existsSync(loadedFile)) return [`(no list of loaded modules: ${name} did not reach its exit handler)`];
      const files = JSON.parse(readFileSync(loadedFile, 'utf8')) as string[];
      return files.filter((f) => !f.startsWith(`${dir}/`));
    },
    tail: () => output.trim().slice(-1500),
  };
}
