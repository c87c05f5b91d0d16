/**
 * `npm run test:unit`: the suites that need no Temporal server, no tool binary (helm, promtool,
 * docker, go) and no build, in well under a minute (docs/testing.md, "Tiers"). Pure code, the
 * provider client against the sandbox over real HTTP, the sandbox, the codec, the bridge's refusals.
 * A suite listed here that reaches for the run's dev server fails at once (test/helpers/stack.ts
 * temporalAddress: TEST_TEMPORAL_ADDRESS is not set). `npm test` runs these too.
 */
const base = require('./jest.config');

// Read by test/global-setup.ts: no dev server, no workflow bundle.
process.env.SKIP_TEMPORAL = '1';

module.exports = {
  ...base,
  testMatch: [
    '<rootDir>/test/unit/**/*.test.ts',
    '<rootDir>/test/provider/**/*.test.ts',
    '<rootDir>/test/sandbox/**/*.test.ts',
    '<rootDir>/test/codec/{codec-audit,codec-auth,codec-server,key-rotation-config,payload-codec}.test.ts',
    '<rootDir>/test/bridge/{fuzz,refusals,client-close,close-in-flight}.test.ts',
    '<rootDir>/test/reconciliation/report-metrics.test.ts',
  ],
};
