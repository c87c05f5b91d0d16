/** `npm run starter -- <command> …`: the operator CLI (CONTRACTS §6). See run.ts for exit codes. */
import { loadConfig } from '../config';
import { runCli } from './run';

let following: string | undefined;
// Stopping the wait does not stop the flow: say where to pick it up.
process.once('SIGINT', () => {
  process.stderr.write(`\nstopped waiting${following ? `; ${following} keeps running (npm run starter -- status ${following})` : ''}\n`);
  process.exit(130);
});

// A bad variable is the runner's to report (exit 2, and under --json the one object), not an exit of its own.
runCli(process.argv.slice(2), () => loadConfig(), {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  following: (workflowId) => (following = workflowId),
}).then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`starter: ${(err as Error).message}\n`);
    process.exitCode = 3;
  },
);
