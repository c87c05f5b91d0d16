/**
 * Fetches the Java test server (time skipping) once per machine; `npm test` runs it before jest.
 * A machine without java or mvn gets one line and exit 1.
 */
import { ensureJavaTestServer, JavaTestServerUnavailable } from './java-test-server';

async function main(): Promise<void> {
  const path = await ensureJavaTestServer();
  process.stderr.write(`Java test server: ${path}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof JavaTestServerUnavailable ? err.message : (err as Error).stack}\n`);
  process.exit(1);
});
