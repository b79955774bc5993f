// Lint for `npm test`: the recommended rules, type-aware, with the ones that catch what review misses
// made errors: promises nobody awaits or handles, and type assertions that claim more than is known.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // The benchmark's references are other projects' servers, installed on their own.
  { ignores: ['bench/references/', 'bench/profile/', '.vitest/', 'node_modules/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unsafe-type-assertion': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // An async function without an await still turns a throw into a rejection, which is what a
      // caller of a Promise-returning interface (the rate limit counters, say) expects.
      '@typescript-eslint/require-await': 'off',
      // The server adapter declares its hook payload's functions (endResponse, fetchAPI…) as methods,
      // yet they are closures that hooks take apart by design.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // A test reads an answer and then asserts on it: the expectations that follow check what a cast claims.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-unsafe-type-assertion': 'off' },
  },
  { files: ['**/*.js'], extends: [tseslint.configs.disableTypeChecked] },
);
