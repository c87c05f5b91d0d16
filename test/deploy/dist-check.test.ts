/**
 * The image as it ships (tools/dist-check.ts): dist/ compiled with tsconfig.build.json, installed
 * with production dependencies only in a fresh directory, the worker, the bridge and the codec
 * endpoint started from it with plain `node`, one flow of each kind, the CLI as the image runs
 * it. On this machine's Node and on Node 24 (the npm registry's `node` package; skipped, and
 * said, when it cannot be had).
 */
import { buildImageDir, node24, runImage, type BuiltImage } from '../../tools/dist-check';

const quiet = () => undefined;

describe('the image as it ships, run with plain node', () => {
  let image: BuiltImage;
  beforeAll(() => {
    image = buildImageDir(quiet);
  }, 600_000);
  afterAll(() => image?.remove());

  test("on this machine's Node: every flow ends as expected, the CLI answers, nothing loaded from outside the install", async () => {
    const result = await runImage(image, process.execPath, { log: quiet });
    expect(result.lines.join('\n')).not.toMatch(/FAILED|loaded from outside/);
    expect(result.ok).toBe(true);
  }, 300_000);

  const node = node24();
  if (!node) process.stderr.write('dist check on Node 24: skipped, npm install node@24 gave no binary\n');
  (node ? test : test.skip)(`on Node 24${node ? '' : ': SKIPPED, no Node 24 binary from the npm registry'}`, async () => {
    const result = await runImage(image, node!, { log: quiet });
    expect(result.lines[0]).toMatch(/^node v24\./);
    expect(result.lines.join('\n')).not.toMatch(/FAILED|loaded from outside/);
    expect(result.ok).toBe(true);
  }, 300_000);
});
