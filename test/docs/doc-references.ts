/**
 * What the README and docs/ name, read out of their Markdown, and whether each thing exists:
 * repository paths, npm scripts, CLI commands and flags, environment variables, chart values.
 * Used by docs-references.test.ts; no Temporal, no network, no process started.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

// js-yaml is in node_modules through eslint (not a dependency of ours) and has no types here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { load } = require('js-yaml') as { load: (text: string) => unknown };

export const ROOT = join(__dirname, '../..');

/** The pages a reader follows: the front door, every docs page, the examples' and the client package's READMEs. */
export function documentedPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  const examples = readdirSync(join(ROOT, 'examples')).map((d) => `examples/${d}/README.md`).filter((p) => existsSync(join(ROOT, p)));
  return ['README.md', ...docs, ...examples, 'packages/client/README.md'];
}

export function read(page: string): string {
  return readFileSync(join(ROOT, page), 'utf8');
}

/**
 * Every `inline code` span of a page, with its line; fenced blocks are read separately (codeBlocks).
 * A line that says what it names was removed or renamed is history, and names what no longer exists.
 */
export function codeSpans(text: string): Array<{ span: string; line: number }> {
  const out: Array<{ span: string; line: number }> = [];
  let inFence = false;
  text.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) inFence = !inFence;
    else if (!inFence && !/\b(removed|renamed|retired)\b/i.test(line)) for (const m of line.matchAll(/`([^`]+)`/g)) out.push({ span: m[1], line: i + 1 });
  });
  return out;
}

/** The lines of every fenced block (sh, js, ts, …) with their line numbers. */
export function codeBlocks(text: string): Array<{ text: string; line: number; lang: string }> {
  const out: Array<{ text: string; line: number; lang: string }> = [];
  let lang: string | undefined;
  text.split('\n').forEach((line, i) => {
    const fence = /^\s*```(\w*)/.exec(line);
    if (fence) lang = lang === undefined ? fence[1] : undefined;
    else if (lang !== undefined) out.push({ text: line, line: i + 1, lang });
  });
  return out;
}

/** Markdown links to files of the repository (not URLs, not anchors within the page). */
export function fileLinks(text: string): Array<{ target: string; anchor?: string; line: number }> {
  const out: Array<{ target: string; anchor?: string; line: number }> = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const [target, anchor] = m[1].split('#');
      if (!target || /^[a-z]+:/.test(target)) continue;
      out.push({ target, ...(anchor ? { anchor } : {}), line: i + 1 });
    }
  });
  return out;
}

const TOP_DIRS = ['src', 'test', 'tools', 'docs', 'deploy', 'examples', 'packages', 'bench'];
const ROOT_FILES = new Set(['Dockerfile', 'docker-compose.yml', 'package.json', 'package-lock.json', 'CHANGELOG.md', 'README.md', 'jest.config.js', 'eslint.config.js', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.sandbox.json']);

/**
 * A code span that names a file or folder of this repository: it starts with one of its top folders or
 * is one of its root files. Spans with placeholders (`<…>`, `…`, `*`, `{…}`) or generated folders
 * (`dist/`, `temp/`, results) name no one file and are left out.
 */
export function repositoryPath(span: string): string | undefined {
  const s = span.trim().replace(/[.,;:]$/, '').replace(/:\d+$/, '');
  if (/\s/.test(s) || /[<>…*{}$]/.test(s)) return undefined;
  if (ROOT_FILES.has(s)) return s;
  const top = s.split('/')[0];
  if (!TOP_DIRS.includes(top) || !s.includes('/')) return undefined;
  if (/\/(dist|temp|results|histories\/current)(\/|$)/.test(s) && !s.startsWith('test/replay/histories/current')) return undefined;
  return s.replace(/\/$/, '');
}

/** The path, or a test file it names as jest's pattern does (`test/deploy/dist-check`). */
export function pathExists(path: string): boolean {
  return existsSync(join(ROOT, path)) || existsSync(join(ROOT, `${path}.test.ts`));
}

export function npmScripts(): Set<string> {
  return new Set(Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts));
}

/** `npm run NAME` and `npm test` anywhere in a page (prose, spans and blocks alike). */
export function npmRunNames(text: string): Array<{ name: string; line: number }> {
  const out: Array<{ name: string; line: number }> = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/npm run ([a-z][\w:-]*)/g)) out.push({ name: m[1], line: i + 1 });
  });
  return out;
}

/** `npm run starter -- COMMAND [words] --flag …` as written, up to the end of the span or line. */
export function cliInvocations(text: string): Array<{ command: string; words: string[]; flags: string[]; line: number }> {
  const out: Array<{ command: string; words: string[]; flags: string[]; line: number }> = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/(?:npm run starter --|node dist\/starter\/cli\.js) ([^`|]*)/g)) {
      const tokens = m[1].trim().split(/\s+/).filter(Boolean);
      const command = tokens[0];
      if (!command || /^[<-]/.test(command) || command === '…') continue;
      const flags = tokens.filter((t) => /^--[a-z]/.test(t)).map((t) => t.replace(/^--/, '').replace(/=.*$/, '').replace(/[^a-z-]+$/, ''));
      out.push({ command, words: tokens.slice(1).filter((t) => !t.startsWith('-')), flags, line: i + 1 });
    }
  });
  return out;
}

/**
 * The CLI usages a table's first cell shows (docs/cli.md: `` `card ID [--max-age-ms N]` ``): each code
 * span whose first word is one of `commands`, with the flags it shows. A flag dropped from a command
 * leaves its row stale; this finds it.
 */
export function cliUsageCells(text: string, commands: ReadonlySet<string>): Array<{ command: string; flags: string[]; line: number }> {
  const out: Array<{ command: string; flags: string[]; line: number }> = [];
  text.split('\n').forEach((line, i) => {
    const first = /^\|([^|]*)\|/.exec(line)?.[1];
    if (!first) return;
    for (const m of first.matchAll(/`([^`]+)`/g)) {
      const tokens = m[1].trim().split(/\s+/);
      if (!commands.has(tokens[0])) continue;
      const flags = tokens.filter((t) => /^\[?--[a-z]/.test(t)).map((t) => t.replace(/^\[?--/, '').replace(/[^a-z-].*$/, ''));
      out.push({ command: tokens[0], flags, line: i + 1 });
    }
  });
  return out;
}

/** The prefixes of the variables our processes read: a name under one of them that the code does not read is stale. */
const OUR_PREFIXES = ['TEMPORAL_', 'PROVIDER_', 'SANDBOX_', 'BRIDGE_', 'CODEC_', 'PAYLOAD_CODEC_', 'PIN_SEAL_', 'CARD_ACTION_', 'CARD_ISSUING_', 'SIGNAL_MAC_', 'KYC_', 'DOCUMENTS_', 'METRICS_', 'NEXUS_', 'ENTITY_', 'OPEN_ITEM_', 'RECONCILE_', 'OTEL_', 'LOG_', 'WORKFLOW_BUNDLE_', 'LISTEN_'];

/**
 * Variables the docs may name that no process of ours reads through its configuration: set for other
 * programs (the Temporal UI, Node, the OpenTelemetry SDK, compose, the test run) or by them.
 */
export const OTHER_PROGRAMS_VARIABLES = new Set([
  'TEMPORAL_CODEC_ENDPOINT', 'TEMPORAL_CODEC_PASS_ACCESS_TOKEN', 'TEMPORAL_UI_AUTH_ENABLED', 'TEMPORAL_UI_AUTH_PROVIDER_URL',
  'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_TRACES_SAMPLER',
  // The Temporal server's own (docs/security.md, compose's authz profile).
  'TEMPORAL_AUTH_AUTHORIZER', 'TEMPORAL_AUTH_CLAIM_MAPPER', 'TEMPORAL_JWT_KEY_SOURCE1', 'TEMPORAL_JWT_PERMISSIONS_CLAIM', 'TEMPORAL_SERVICES', 'TEMPORAL_TLS_FRONTEND_CERT',
  'NODE_ENV', 'NODE_OPTIONS', 'BUILD_ID', 'WORKER_REPLICAS', 'BRIDGE_REPLICAS', 'POSTGRES_PASSWORD', 'HEALTHCHECK_URL', 'PORT', 'SKIP_TEMPORAL', 'CARD_ID',
]);

/** Names in a span or a code line that look like our variables: under one of our prefixes, and no constant of the code's. */
export function variableNames(text: string): string[] {
  const constants = codeConstants();
  return [...text.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)].map((m) => m[0]).filter((name) => OUR_PREFIXES.some((p) => name.startsWith(p)) && !constants.has(name));
}

let constants: Set<string> | undefined;
/** `const NAME` of src/ (PROVIDER_ERROR_CODES, RECONCILE_PRIORITY, …): a doc naming one names code, not a variable. */
function codeConstants(): Set<string> {
  constants ??= new Set(walk('src').flatMap((file) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(/\bconst ([A-Z][A-Z0-9_]+)\b/g)].map((m) => m[1])));
  return constants;
}

/** Every variable the code reads: the configuration's schema (src/config/index.ts) and the client's optionsFromEnv. */
export function variablesTheCodeReads(): Set<string> {
  const names = new Set<string>();
  const schema = readFileSync(join(ROOT, 'src/config/index.ts'), 'utf8');
  const body = schema.slice(schema.indexOf('const envSchema = z.object({'), schema.indexOf('\n});', schema.indexOf('const envSchema')));
  for (const m of body.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)) names.add(m[1]);
  for (const file of walk('src')) {
    const source = readFileSync(join(ROOT, file), 'utf8');
    for (const m of source.matchAll(/\benv(?:\.|\[')([A-Z][A-Z0-9_]+)/g)) names.add(m[1]);
    for (const m of source.matchAll(/env\[`\$\{prefix\}(_[A-Z_]+)`\]/g)) for (const prefix of ['PAYLOAD_CODEC']) names.add(`${prefix}${m[1]}`);
  }
  names.delete('NODE_ENV');
  return names;
}

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return walk(path);
    return /\.ts$/.test(e.name) ? [path] : [];
  });
}

/** The chart's values (values.yaml) and every `.Values.x.y` its templates read. */
export function chartValuePaths(): Set<string> {
  const chart = 'deploy/helm/card-issuing';
  const paths = new Set<string>();
  const visit = (value: unknown, prefix: string) => {
    if (prefix) paths.add(prefix);
    if (value && typeof value === 'object' && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) visit(v, prefix ? `${prefix}.${k}` : k);
  };
  visit(load(read(`${chart}/values.yaml`)), '');
  for (const file of readdirSync(join(ROOT, chart, 'templates'))) {
    for (const m of read(`${chart}/templates/${file}`).matchAll(/\.Values((?:\.[A-Za-z0-9_]+)+)/g)) {
      const parts = m[1].slice(1).split('.');
      parts.forEach((_, i) => paths.add(parts.slice(0, i + 1).join('.')));
    }
  }
  return paths;
}

/** Top-level keys of the chart's values: a dotted span starting with one is a chart value. */
export function chartTopKeys(): Set<string> {
  return new Set(Object.keys(load(read('deploy/helm/card-issuing/values.yaml')) as Record<string, unknown>));
}

/** A span such as `worker.autoscaling.enabled` or `worker.previous.replicas` (placeholders excluded). */
export function chartValueOf(span: string, topKeys: Set<string>): string | undefined {
  const s = span.trim().replace(/=.*$/, '');
  if (!/^[a-z][A-Za-z0-9]*(\.[A-Za-z0-9]+)+$/.test(s)) return undefined;
  if (/\.(ts|js|md|yml|yaml|json|tgz|go|mod|sum|txt|tpl|test)$/.test(s)) return undefined;
  return topKeys.has(s.split('.')[0]) ? s : undefined;
}

export const relativeToRoot = (path: string) => relative(ROOT, path);

/** Git's list of the repository's files, to name a bare file (`demo.ts`) only when one exists. */
export function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
}
