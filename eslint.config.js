// ESLint with the rules Temporal's TypeScript samples use: no floating promises anywhere, and
// workflow code kept deterministic (no Node built-ins, no activity/worker/client modules at runtime).
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

module.exports = tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.data/**', 'bench/results/**', 'eslint.config.js', 'jest.config.js', 'jest.unit.config.js', 'test/sequencer.js', 'packages/*/dist/**', 'packages/*/temp/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: __dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    // tools/cluster/builds: the variant workflow builds of `npm run cluster-deploy` are workflow code too.
    files: ['src/workflows/**/*.ts', 'src/shared/**/*.ts', 'tools/cluster/builds/{v2,v3,pinned,constants}.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflow code runs in a deterministic sandbox: no Node built-ins.' })),
            ...['@temporalio/activity', '@temporalio/client', '@temporalio/worker', 'undici'].map((name) => ({
              name,
              message: 'Workflow code imports activities as types only, through proxyActivities.',
              allowTypeImports: true,
            })),
          ],
          patterns: [
            { group: ['**/activities', '**/activities/*', '**/provider/client', '**/provider/transport', '**/codec/*', '**/temporal/*'], allowTypeImports: true, message: 'Import activities and I/O modules as types only.' },
          ],
        },
      ],
    },
  },
);
