/**
 * `helm template` of deploy/helm/card-issuing for the chart's tests: release `rel` in namespace
 * card-issuing, `--set` values (and flags such as --api-versions as given), the documents parsed.
 * helm comes from the PATH or tools/helm.ts's cache; `helm` is undefined without it (tests skip).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { findHelm } from '../../tools/helm';

// js-yaml is in node_modules through eslint (not a dependency of ours) and has no types here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { loadAll } = require('js-yaml') as { loadAll: (text: string) => unknown[] };

export const CHART = join(__dirname, '../../deploy/helm/card-issuing');
export const helm = findHelm();

export interface Doc { kind: string; metadata: { name: string; labels?: Record<string, string> }; spec: any }

export function helmTemplate(...args: string[]): { status: number | null; out: string; docs: Doc[] } {
  const flags = args.flatMap((a) => (a.startsWith('--') ? [a] : ['--set', a]));
  const res = spawnSync(helm!, ['template', 'rel', CHART, '--namespace', 'card-issuing', ...flags], { encoding: 'utf8' });
  return { status: res.status, out: `${res.stdout}${res.stderr}`, docs: res.status === 0 ? (loadAll(res.stdout).filter(Boolean) as Doc[]) : [] };
}
