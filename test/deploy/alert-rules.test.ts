/**
 * deploy/prometheus/alerts.yml: valid rules, and every rule's unit test (alerts.test.yml, input
 * series and the alerts they must and must not raise) passes under `promtool test rules`.
 * promtool comes with Debian's `prometheus` package; without it these tests are skipped and say so.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findOnPath } from '../../tools/cache';

const DIR = join(__dirname, '../../deploy/prometheus');
const promtool = findOnPath('promtool');
if (!promtool) process.stderr.write("alert rules: skipped, promtool is not installed (Debian's `prometheus` package: apt-get install prometheus)\n");

(promtool ? describe : describe.skip)(`alert rules${promtool ? '' : ": SKIPPED, promtool is not installed (Debian's prometheus package)"}`, () => {
  const run = (...args: string[]) => spawnSync(promtool!, args, { cwd: DIR, encoding: 'utf8' });

  test('promtool checks the rules', () => {
    const res = run('check', 'rules', 'alerts.yml');
    expect(`${res.stdout}${res.stderr}`).toMatch(/SUCCESS: \d+ rules found/);
    expect(res.status).toBe(0);
  });

  test('every rule has a unit test, and every unit test passes', () => {
    const rules = [...readFileSync(join(DIR, 'alerts.yml'), 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    const tested = new Set([...readFileSync(join(DIR, 'alerts.test.yml'), 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1]));
    expect(rules.filter((r) => !tested.has(r))).toEqual([]);
    const res = run('test', 'rules', 'alerts.test.yml');
    expect(`${res.stdout}${res.stderr}`).toContain('SUCCESS');
    expect(res.status).toBe(0);
  });
});
