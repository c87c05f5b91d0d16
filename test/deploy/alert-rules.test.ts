/**
 * deploy/prometheus/alerts.yml: valid rules, and every rule's unit test (alerts.test.yml, and
 * alerts.long.test.yml for the tests that span days: input series and the alerts they must and
 * must not raise) passes under `promtool test rules`. Every alert a pager receives can be trusted
 * and acted on: it has a severity, a paging one a `for:`, and a `runbook_url` to its own section of
 * docs/runbooks.md (what it means, impact, diagnose, fix, verify), all on one base URL so that one
 * `sed` rewrites them where the rules are vendored; the alert table of docs/operations.md links each.
 * promtool comes with Debian's `prometheus` package; without it the promtool tests are skipped and say so.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findOnPath } from '../../tools/cache';
import { helm, helmTemplate } from '../helpers/helm';

const ROOT = join(__dirname, '../..');
const DIR = join(ROOT, 'deploy/prometheus');
const TEST_FILES = ['alerts.test.yml', 'alerts.long.test.yml'];
const RUNBOOK_PARTS = ['What it means.', 'Impact.', 'Diagnose.', 'Fix.', 'Verify.'];
const promtool = findOnPath('promtool');
if (!promtool) process.stderr.write("alert rules: promtool tests skipped, promtool is not installed (Debian's `prometheus` package: apt-get install prometheus)\n");

interface Rule {
  kind: 'alert' | 'record';
  name: string;
  /** The rule's lines, up to the next rule or group. */
  text: string;
}

/** The rules of alerts.yml, each with its lines (the file's layout: groups at 2 spaces, rules at 6, their keys at 8). */
function rules(): Rule[] {
  const text = readFileSync(join(DIR, 'alerts.yml'), 'utf8');
  return text
    .split(/^(?= {6}- (?:alert|record): )/m)
    .slice(1)
    .map((block) => {
      const [, kind, name] = /^ {6}- (alert|record): (\S+)/.exec(block)!;
      return { kind: kind as Rule['kind'], name, text: block.split(/^ {2}- name: /m)[0] };
    });
}

const alerts = () => rules().filter((r) => r.kind === 'alert');
const field = (rule: Rule, re: RegExp) => re.exec(rule.text)?.[1];
const severityOf = (rule: Rule) => field(rule, /^ {8}labels:.*\bseverity: (\w+)/m);
const forOf = (rule: Rule) => field(rule, /^ {8}for: (\S+)\s*$/m);
const runbookUrlOf = (rule: Rule) => field(rule, /^ {10}runbook_url: '([^']+)'\s*$/m);

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function runbookSections(): Map<string, string> {
  const text = readFileSync(join(ROOT, 'docs/runbooks.md'), 'utf8');
  const sections = new Map<string, string>();
  for (const part of text.split(/^(?=#{1,6} )/m)) {
    const heading = /^#{1,6} (.+)$/m.exec(part);
    if (heading) sections.set(githubSlug(heading[1]), part);
  }
  return sections;
}

/** Go duration of a `for:` (promtool's units), in seconds. */
function seconds(duration: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 };
  const parts = [...duration.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  expect(parts.map((p) => p[0]).join('')).toBe(duration);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * units[unit], 0);
}

describe('alert rules: what a pager receives', () => {
  test('the rules are read: alerts and recordings, each once', () => {
    const names = rules().map((r) => r.name);
    expect(alerts().length).toBeGreaterThan(15);
    expect(new Set(names).size).toBe(names.length);
    expect(githubSlug('ProcessDown')).toBe('processdown');
    expect(githubSlug('Money first')).toBe('money-first');
  });

  test('every alert has a severity, page or warn, and every paging alert a `for:` of at least a minute', () => {
    const severities = alerts().map((a) => [a.name, severityOf(a)]);
    expect(severities.filter(([, s]) => s !== 'page' && s !== 'warn')).toEqual([]);
    const paging = alerts().filter((a) => severityOf(a) === 'page');
    expect(paging.length).toBeGreaterThan(10);
    expect(paging.filter((a) => forOf(a) === undefined || seconds(forOf(a)!) < 60).map((a) => a.name)).toEqual([]);
  });

  test('every alert links its runbook: one base for all, the anchor its name, a section of docs/runbooks.md with the five parts', () => {
    const urls = alerts().map((a) => ({ name: a.name, url: runbookUrlOf(a) }));
    expect(urls.filter((u) => u.url === undefined).map((u) => u.name)).toEqual([]);
    const bases = new Set(urls.map((u) => u.url!.split('#')[0]));
    expect(bases.size).toBe(1);
    expect([...bases][0]).toMatch(/^https:\/\/\S+\/docs\/runbooks\.md$/);
    const sections = runbookSections();
    for (const { name, url } of urls) {
      const anchor = url!.split('#')[1];
      expect({ name, anchor }).toEqual({ name, anchor: githubSlug(name) });
      const section = sections.get(anchor);
      expect({ name, found: section !== undefined }).toEqual({ name, found: true });
      expect({ name, missing: RUNBOOK_PARTS.filter((p) => !section!.includes(`**${p}**`)) }).toEqual({ name, missing: [] });
    }
  });

  test("docs/runbooks.md has no section for an alert that is gone, and its links within the page resolve", () => {
    const text = readFileSync(join(ROOT, 'docs/runbooks.md'), 'utf8');
    const alertSlugs = new Set(alerts().map((a) => githubSlug(a.name)));
    const alertSections = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]).filter((h) => /^[A-Z][A-Za-z]+$/.test(h));
    expect(alertSections.filter((h) => !alertSlugs.has(githubSlug(h)))).toEqual([]);
    const anchors = new Set(runbookSections().keys());
    expect([...text.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]).filter((a) => !anchors.has(a))).toEqual([]);
  });

  test("docs/operations.md's alert table lists every alert, linked to its runbook", () => {
    const page = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const missing = alerts().filter((a) => !page.includes(`| [\`${a.name}\`](runbooks.md#${githubSlug(a.name)})`));
    expect(missing.map((a) => a.name)).toEqual([]);
  });
});

(promtool ? describe : describe.skip)(`alert rules under promtool${promtool ? '' : ": SKIPPED, promtool is not installed (Debian's prometheus package)"}`, () => {
  const run = (...args: string[]) => spawnSync(promtool!, args, { cwd: DIR, encoding: 'utf8' });

  test('promtool checks the rules, and finds as many as this test reads', () => {
    const res = run('check', 'rules', 'alerts.yml');
    const found = /SUCCESS: (\d+) rules found/.exec(`${res.stdout}${res.stderr}`);
    expect(found).not.toBeNull();
    expect(Number(found![1])).toBe(rules().length);
    expect(res.status).toBe(0);
  });

  test('every alert has a unit test, and every unit test passes', () => {
    const tested = new Set(TEST_FILES.flatMap((f) => [...readFileSync(join(DIR, f), 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1])));
    expect(alerts().filter((r) => !tested.has(r.name)).map((r) => r.name)).toEqual([]);
    const res = run('test', 'rules', ...TEST_FILES);
    const out = `${res.stdout}${res.stderr}`;
    expect(out.match(/SUCCESS/g)?.length).toBe(TEST_FILES.length);
    expect(res.status).toBe(0);
  }, 120_000);
});

(helm ? describe : describe.skip)(`alert rules in the chart${helm ? '' : ': SKIPPED, helm is not installed (npx tsx tools/helm.ts builds it with Go)'}`, () => {
  const OPERATOR = '--api-versions=monitoring.coreos.com/v1';
  const BASE = 'https://git.example.com/payments/card-issuing/-/blob/v1.4.0/docs/runbooks.md';

  test('alerts.runbookBaseUrl is the base of every runbook_url of the PrometheusRule, each resolving to its section of docs/runbooks.md', () => {
    const { status, out, docs } = helmTemplate('alerts.enabled=true', `alerts.runbookBaseUrl=${BASE}`, 'alerts.labels.release=kps', OPERATOR);
    expect({ status, out: status === 0 ? '' : out }).toEqual({ status: 0, out: '' });
    const rule = docs.find((d) => d.kind === 'PrometheusRule')!;
    expect(rule.metadata.labels).toMatchObject({ release: 'kps' });
    const rendered = (rule.spec.groups as { rules: { alert?: string; annotations?: { runbook_url?: string } }[] }[]).flatMap((g) => g.rules).filter((r) => r.alert);
    expect(rendered.map((r) => r.alert)).toEqual(alerts().map((a) => a.name));
    const sections = runbookSections();
    for (const r of rendered) {
      const [base, anchor] = r.annotations!.runbook_url!.split('#');
      expect({ alert: r.alert, base, anchor, section: sections.has(anchor) }).toEqual({ alert: r.alert, base: BASE, anchor: githubSlug(r.alert!), section: true });
    }
    expect(out).not.toContain('OWNER');
  });

  test('each component gets a PodMonitor whose scrape job is the name the rules select', () => {
    const { docs } = helmTemplate('alerts.enabled=true', `alerts.runbookBaseUrl=${BASE}`, OPERATOR);
    const jobs = docs.filter((d) => d.kind === 'PodMonitor').map((d) => d.spec.podMetricsEndpoints[0].relabelings.find((r: { targetLabel: string }) => r.targetLabel === 'job').replacement);
    expect(jobs.sort()).toEqual(['card-issuing-bridge', 'card-issuing-worker']);
    const selected = new Set([...readFileSync(join(DIR, 'alerts.yml'), 'utf8').matchAll(/job="([^"]+)"/g)].map((m) => m[1]));
    expect([...selected].sort()).toEqual(jobs);
    // The PodMonitors scrape the pods: no scrape annotations beside them (a Prometheus scraping both would count every series twice).
    const pods = docs.filter((d) => d.kind === 'Deployment').map((d) => d.spec.template.metadata.annotations ?? {});
    expect(pods.filter((a) => 'prometheus.io/scrape' in a)).toEqual([]);
    expect(helmTemplate().docs.filter((d) => d.kind === 'Deployment' && 'prometheus.io/scrape' in (d.spec.template.metadata.annotations ?? {})).length).toBeGreaterThan(0);
  });

  test('off by default; on, it refuses a missing or malformed base and a cluster without the operator, naming the value', () => {
    expect(helmTemplate().docs.filter((d) => d.kind === 'PrometheusRule' || d.kind === 'PodMonitor')).toEqual([]);
    expect(helmTemplate('alerts.enabled=true', OPERATOR).out).toMatch(/alerts.runbookBaseUrl is required with alerts.enabled=true/);
    expect(helmTemplate('alerts.enabled=true', 'alerts.runbookBaseUrl=runbooks.md', OPERATOR).out).toMatch(/alerts.runbookBaseUrl must be an http\(s\) URL/);
    expect(helmTemplate('alerts.enabled=true', `alerts.runbookBaseUrl=${BASE}#top`, OPERATOR).out).toMatch(/without a query, #fragment or quote/);
    expect(helmTemplate('alerts.enabled=true', "alerts.runbookBaseUrl=https://git.example.com/it's/runbooks.md", OPERATOR).out).toMatch(/without a query, #fragment or quote/);
    expect(helmTemplate('alerts.enabled=true', `alerts.runbookBaseUrl=${BASE}`).out).toMatch(/needs the Prometheus Operator/);
    expect(helmTemplate('alerts.enabled=true', `alerts.runbookBaseUrl=${BASE}`, 'alerts.skipCapabilityCheck=true').status).toBe(0);
  });
});
