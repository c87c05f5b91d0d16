/**
 * The tree shows the architecture (STYLE.md): no import circle between the folders of src/ (each
 * top-level folder a component and a node, its subfolders within it; a file at src/'s root, an entry
 * point or the config, a node of its own), and no source file over 400 lines. Type-only imports are
 * left out: they vanish at compile time and tie nothing at run time.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const SRC = join(__dirname, '../../src');
const MAX_LINES = 400;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
  });
}

/** A file's node: its top-level folder under src/, or the file itself at src/'s root. */
function nodeOf(file: string): string {
  return relative(SRC, file).split(sep)[0];
}

function resolveImport(from: string, spec: string): string {
  const base = resolve(dirname(from), spec);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) if (statSync(candidate, { throwIfNoEntry: false })?.isFile()) return candidate;
  return base;
}

/** The folder graph: node → the nodes it imports at run time (and one import line per edge, to name it). */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+'(\.[^']+)'/gms)) {
      const target = nodeOf(resolveImport(file, m[1]));
      const from = nodeOf(file);
      if (target === from) continue;
      const edges = graph.get(from) ?? new Map<string, string>();
      if (!edges.has(target)) edges.set(target, `${relative(SRC, file)} imports ${m[1]}`);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** Strongly connected components of more than one node (Tarjan): each is an import circle. */
function circles(graph: Map<string, Map<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        component.push(w);
        if (w === v) break;
      }
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('no import circle between folders of src/', () => {
  const graph = folderGraph();
  expect(graph.size).toBeGreaterThan(10);
  const named = circles(graph).map((c) => c.flatMap((a) => c.filter((b) => graph.get(a)?.has(b)).map((b) => graph.get(a)!.get(b)!)));
  expect(named).toEqual([]);
});

test('the circle finder finds a circle', () => {
  const graph = new Map([['a', new Map([['b', 'a→b']])], ['b', new Map([['c', 'b→c']])], ['c', new Map([['a', 'c→a']])], ['d', new Map([['a', 'd→a']])]]);
  expect(circles(graph)).toEqual([['a', 'b', 'c']]);
});

test(`no source file over ${MAX_LINES} lines`, () => {
  const long = sources(SRC).map((f) => ({ file: relative(SRC, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 })).filter((f) => f.lines > MAX_LINES);
  expect(long).toEqual([]);
});
