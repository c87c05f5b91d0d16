/** `npm test` runs this first: makes sure a Temporal CLI is there (building it once per machine). */
import { loadConfigOrExit } from '../config';
import { ensureTemporalCli, TemporalCliUnavailable } from './cli';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const path = await ensureTemporalCli(config.temporal.cliPath);
  process.stderr.write(`Temporal CLI: ${path}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof TemporalCliUnavailable ? err.message : (err as Error).stack}\n`);
  process.exit(1);
});
