/** A free TCP port: the worker's SDK metrics exporter takes one; the dev tooling (tools/) starts servers on them. */
import { createServer } from 'node:net';

/** Asks the OS for a port nothing listens on, and releases it (a race with another process remains possible). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
