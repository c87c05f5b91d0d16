/**
 * The public API of @card-issuing/client is a reviewed diff (issue 30): the package is built and API
 * Extractor compares its declarations with packages/client/etc/client.api.md (`npm run api:check`,
 * failing when they differ). And the build holds only what src/client/index.ts reaches: no worker,
 * sandbox, activities or workflows, and its dependencies are exactly what that code requires.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { PACKAGE_DIR, REPO_ROOT, npm, withPackageBuildLock, type Run } from './client-package';

jest.setTimeout(180_000);

let check: Run;
/** The built package as it was right after the check (another test file may rebuild dist/ later). */
let files: Record<string, string> = {};

beforeAll(async () => {
  await withPackageBuildLock(async () => {
    check = await npm(['run', 'api:check']);
    files = Object.fromEntries(listFiles(join(PACKAGE_DIR, 'dist')).map((f) => [relative(join(PACKAGE_DIR, 'dist'), f), readFileSync(f, 'utf8')]));
  });
});

test('its API matches the report checked in at packages/client/etc/client.api.md', () => {
  if (check.code !== 0) {
    throw new Error(
      `npm run api:check failed (${check.ms} ms). If API Extractor says the public API changed and the change is meant, ` +
        'run `npm run api:report` and commit packages/client/etc/client.api.md with it; otherwise undo the change to src/client.\n\n' +
        check.output +
        reportDiff(),
    );
  }
  expect(files['index.d.ts']).toContain('export declare class CardIssuingClient');
});

test('its build holds only what src/client/index.ts reaches, and depends on exactly the packages that code requires', () => {
  const paths = Object.keys(files);
  expect(paths).toContain('client/index.js');
  expect(paths.filter((p) => /(^|\/)(sandbox|activities|workflows|bridge|starter)\/|worker|fastify/.test(p))).toEqual([]);

  const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  const packageOf = (spec: string) => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
  const bare = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]).filter((s) => !s.startsWith('.') && !builtins.has(s)).map(packageOf);
  const required = new Set(paths.filter((p) => p.endsWith('.js')).flatMap((p) => bare(files[p], /require(?:\.resolve)?\("([^"]+)"\)/g)));
  const typesImport = new Set(bare(files['index.d.ts'], /from '([^']+)'/g));

  const pkg = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'));
  const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  expect(Object.keys(pkg.dependencies).sort()).toEqual([...new Set([...required, ...typesImport])].sort());
  for (const [name, version] of Object.entries(pkg.dependencies)) expect(`${name}@${version}`).toBe(`${name}@${root.dependencies[name]}`);
});

/** How the API differs from the report, when API Extractor wrote the new one to temp/. */
function reportDiff(): string {
  const [report, fresh] = ['etc', 'temp'].map((d) => join(PACKAGE_DIR, d, 'client.api.md'));
  if (!existsSync(fresh)) return '';
  const diff = spawnSync('git', ['diff', '--no-index', '--no-color', report, fresh], { encoding: 'utf8' });
  return diff.stdout ? `\n\n${diff.stdout}` : '';
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)]));
}
