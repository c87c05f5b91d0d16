/** The series an alert rule or a dashboard panel names: every identifier of a PromQL expression that is not a function, keyword or label. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
const HISTOGRAM_SUFFIX = /_(bucket|sum|count)$/;

export function seriesNamed(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges
    .replace(/\boffset\s+-?[0-9][0-9a-z]*/gi, ' ') // offsets (`offset 1h`: not a series named h)
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = stripped.slice(m.index! + m[0].length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** A histogram's `_bucket`, `_sum`, `_count` series belong to the name it was declared with. */
export function declaredName(series: string, declared: ReadonlySet<string>): string {
  return !declared.has(series) && HISTOGRAM_SUFFIX.test(series) ? series.replace(HISTOGRAM_SUFFIX, '') : series;
}

/** The metric names declared in src/observability/*.ts (`name: '…'` of prom-client's constructors). */
export function ourDeclaredSeries(root: string): Set<string> {
  const dir = join(root, 'src/observability');
  const names = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(/name: '([a-z_:][a-z0-9_:]*)'/g)) names.add(m[1]);
  }
  return names;
}
