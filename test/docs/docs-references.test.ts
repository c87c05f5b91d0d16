/**
 * Docs that cannot go stale quietly (issue 55): whatever the README, docs/, the examples' READMEs and
 * the client package's README name must exist: repository paths, links, npm scripts, CLI commands
 * and their flags, environment variables, chart values; and every variable the code reads is in the
 * configuration table (docs/configuration.md). Reads files only: passes with SKIP_TEMPORAL=1.
 */
import { COMMANDS } from '../../src/starter/commands';
import {
  OTHER_PROGRAMS_VARIABLES, chartTopKeys, chartValueOf, chartValuePaths, cliInvocations, cliUsageCells, codeBlocks, codeSpans, documentedPages,
  fileLinks, npmRunNames, npmScripts, pathExists, read, repositoryPath, variableNames, variablesTheCodeReads,
} from './doc-references';
import { dirname, join, normalize } from 'node:path';

const pages = documentedPages();
/** Flags every command takes (run.ts adds them). */
const COMMON_FLAGS = ['json', 'help', 'no-wait'];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function githubSlug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchorsOf(page: string): Set<string> {
  return new Set([...read(page).matchAll(/^#{1,6} (.+)$/gm)].map((m) => githubSlug(m[1].replace(/`/g, ''))));
}

describe.each(pages)('%s', (page) => {
  const text = read(page);

  test('every repository path it names exists (from the root, or from its own folder)', () => {
    const missing = codeSpans(text)
      .map(({ span, line }) => ({ path: repositoryPath(span), line }))
      .filter((p): p is { path: string; line: number } => p.path !== undefined && !pathExists(p.path) && !pathExists(join(dirname(page), p.path)));
    expect(missing.map((m) => `${page}:${m.line} ${m.path}`)).toEqual([]);
  });

  test('every link to a file of the repository resolves, and its #anchor names a heading there', () => {
    const broken: string[] = [];
    for (const { target, anchor, line } of fileLinks(text)) {
      const path = normalize(join(dirname(page), target));
      if (!pathExists(path)) broken.push(`${page}:${line} ${target}`);
      else if (anchor && path.endsWith('.md') && !anchorsOf(path).has(anchor)) broken.push(`${page}:${line} ${target}#${anchor}`);
    }
    expect(broken).toEqual([]);
  });

  test('every `npm run` script it names is in package.json', () => {
    const scripts = npmScripts();
    expect(npmRunNames(text).filter((n) => !scripts.has(n.name)).map((n) => `${page}:${n.line} npm run ${n.name}`)).toEqual([]);
  });

  test('every CLI command it names exists, with the flags it shows', () => {
    const wrong: string[] = [];
    for (const { command, flags, line } of cliInvocations(text)) {
      const known = COMMANDS[command];
      if (!known) {
        wrong.push(`${page}:${line} unknown command ${command}`);
        continue;
      }
      const options = new Set([...Object.keys(known.options), ...COMMON_FLAGS]);
      for (const flag of flags) if (!options.has(flag)) wrong.push(`${page}:${line} ${command} has no --${flag}`);
    }
    expect(wrong).toEqual([]);
  });

  test("every CLI usage its tables show names flags the command takes", () => {
    const wrong: string[] = [];
    for (const { command, flags, line } of cliUsageCells(text, new Set(Object.keys(COMMANDS)))) {
      const options = new Set([...Object.keys(COMMANDS[command].options), ...COMMON_FLAGS]);
      for (const flag of flags) if (!options.has(flag)) wrong.push(`${page}:${line} ${command} has no --${flag}`);
    }
    expect(wrong).toEqual([]);
  });

  test('every environment variable of ours it names is one the code reads', () => {
    const read = variablesTheCodeReads();
    const named = [...codeSpans(text).map(({ span, line }) => ({ text: span, line })), ...codeBlocks(text)];
    const unknown = named.flatMap(({ text: t, line }) => variableNames(t).filter((v) => !read.has(v) && !OTHER_PROGRAMS_VARIABLES.has(v)).map((v) => `${page}:${line} ${v}`));
    expect([...new Set(unknown)]).toEqual([]);
  });

  test('every chart value it names is in values.yaml or read by a template', () => {
    const values = chartValuePaths();
    const top = chartTopKeys();
    const unknown = codeSpans(text)
      .map(({ span, line }) => ({ value: chartValueOf(span, top), line }))
      .filter((v): v is { value: string; line: number } => v.value !== undefined && !values.has(v.value));
    expect(unknown.map((u) => `${page}:${u.line} ${u.value}`)).toEqual([]);
  });
});

describe('tables that must stay complete', () => {
  test('every variable the code reads is in the configuration table (docs/configuration.md)', () => {
    const table = read('docs/configuration.md').split('\n').filter((l) => l.startsWith('| `'));
    const listed = new Set(table.flatMap((row) => [...row.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])));
    expect([...variablesTheCodeReads()].filter((v) => !listed.has(v)).sort()).toEqual([]);
  });

  test('the CLI table (docs/cli.md) maps every command, and only commands, to its client method and workflow', () => {
    const page = read('docs/cli.md');
    const table = page.slice(page.indexOf('## Each command, its client method and its workflow'));
    const firstCells = table.split('\n').filter((l) => l.startsWith('| `')).map((row) => row.split('|')[1]);
    const listed = firstCells.flatMap((cell) => [...cell.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]));
    expect(Object.keys(COMMANDS).filter((c) => !listed.includes(c))).toEqual([]);
    expect(listed.filter((c) => !COMMANDS[c])).toEqual([]);
  });
});
