/**
 * `npm test` runs this first. The Temporal CLI is required: found or built once per machine, or
 * exit 1 with one line saying what to install. The Java test server is optional: fetched once per
 * machine when Java and Maven are there; otherwise one line says what is missing and that the
 * time-skipping tests will be skipped, and the run goes on. helm (the chart checks) likewise:
 * found, or built once per machine with Go (tools/helm.ts, a few minutes), or one line saying
 * that test/deploy/helm-chart.test.ts will be skipped. A Compose loader (the compose file checks)
 * likewise: `docker compose` or `docker-compose`, or tools/compose-config built once with Go
 * (tools/compose.ts, about a minute), or one line saying that test/deploy/compose.test.ts will be skipped.
 * tools/temporal-authz (Temporal's server with our authorizer) likewise: built once with Go
 * (tools/temporal-authz.ts, well under a minute after the CLI's build), or one line saying why not;
 * test/deploy/temporal-authz.test.ts then builds it itself, or is skipped without Go.
 */
import { loadConfigOrExit } from '../src/config';
import { findOnPath, stderrLine } from './cache';
import { ensureCompose } from './compose';
import { ensureHelm } from './helm';
import { ensureJavaTestServer, javaTestServerMissing } from './java-test-server';
import { ensureTemporalAuthz } from './temporal-authz';
import { ensureTemporalCli, TemporalCliUnavailable } from './temporal-cli';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  stderrLine(`Temporal CLI: ${await ensureTemporalCli(config.temporal.cliPath)}`);
  const missing = javaTestServerMissing();
  if (missing) stderrLine(`Java test server: not provisioned, this machine lacks ${missing}; the time-skipping tests (test/time-skipping.test.ts) will be skipped`);
  else stderrLine(`Java test server: ${await ensureJavaTestServer()}`);
  if (!findOnPath('promtool')) stderrLine("promtool: not installed (Debian's `prometheus` package); the alert rule tests (test/deploy/alert-rules.test.ts) will be skipped");
  await ensureHelm().then(
    (helm) => stderrLine(`helm: ${helm}`),
    (err: Error) => stderrLine(`helm: not provisioned (${err.message}); the chart checks (test/deploy/helm-chart.test.ts) will be skipped`),
  );
  await ensureCompose().then(
    (compose) => stderrLine(`compose: ${compose.what}`),
    (err: Error) => stderrLine(`compose: not provisioned (${err.message}); the compose file checks (test/deploy/compose.test.ts) will be skipped`),
  );
  await ensureTemporalAuthz().then(
    (server) => stderrLine(`temporal-authz: ${server}`),
    (err: Error) => stderrLine(`temporal-authz: not provisioned (${err.message}); test/deploy/temporal-authz.test.ts builds it on first use, or is skipped without Go`),
  );
}

main().catch((err) => {
  process.stderr.write(`${err instanceof TemporalCliUnavailable ? err.message : (err as Error).stack}\n`);
  process.exit(1);
});
