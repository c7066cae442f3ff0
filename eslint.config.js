// Lint for the JavaScript (npm test runs it; prettier owns the formatting).
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['node_modules/', 'target/', '.tools/', 'out/', 'test-output/', 'sites/build/'] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: { ...globals.node } },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  // In-page scripts, and the page.evaluate() callbacks of the code that
  // drives Chromium, run in the page.
  {
    files: [
      'harness/pageload/**',
      'harness/bulk/**',
      'harness/report/client.js',
      'harness/report/client-runs.js',
      'test/integration/report.test.js',
    ],
    languageOptions: { globals: { ...globals.browser } },
  },
  // Tests match aligned text columns space for space.
  { files: ['test/**'], languageOptions: { globals: { ...globals.mocha } }, rules: { 'no-regex-spaces': 'off' } },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs' } },
];
