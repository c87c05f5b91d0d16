/** `npm run starter -- <command> …`: the operator CLI (CONTRACTS §6). See run.ts for exit codes. */
import { loadConfig, requireSecrets } from '../config';
import { runCli } from './run';

let following: string | undefined;
// Stopping the wait does not stop the flow: say where to pick it up.
process.once('SIGINT', () => {
  process.stderr.write(`\nstopped waiting${following ? `; ${following} keeps running (npm run starter -- status ${following})` : ''}\n`);
  process.exit(130);
});

/** Commands that send and read no payload of ours, and so need no payload key (the chart's endpoint Job is given none). */
const WITHOUT_PAYLOADS: ReadonlySet<string> = new Set(['nexus-endpoint']);
/** Commands that act on a card: each signs a capability, so outside development the operator's own signing key is required. */
const CARD_ACTIONS: ReadonlySet<string> = new Set(['freeze', 'unfreeze', 'delete', 'pin', 'contact', 'reveal']);

// A bad variable is the runner's to report (exit 2, and under --json the one object), not an exit of its own.
// Its payloads go to workers with the real payload key: outside development it must hold it too.
runCli(process.argv.slice(2), () => {
  const config = loadConfig();
  if (!WITHOUT_PAYLOADS.has(process.argv[2] ?? '')) requireSecrets('PAYLOAD_CODEC_KEY')(config);
  if (CARD_ACTIONS.has(process.argv[2] ?? '')) requireSecrets('CARD_ACTION_SIGNING_KEY')(config);
  return config;
}, {
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
