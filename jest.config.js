/** One Temporal dev server per run (globalSetup), TypeScript through ts-jest without type-checking (`npm run build` type-checks). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }],
    // `cookie` 2 ships ES modules only, and fastify's `inject` (light-my-request) requires it: compiled to CommonJS
    // here, so routes can be tested through app.inject (Node 20's jest cannot require an ES module).
    '/node_modules/cookie/.+\\.js$': ['ts-jest', { isolatedModules: true, diagnostics: false, tsconfig: { allowJs: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!cookie/)'],
  // Longest suites first, from test/suite-times.json: a fresh clone has no durations in jest's cache.
  testSequencer: '<rootDir>/test/sequencer.js',
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 120000,
  verbose: true,
};
