import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/**
 * Another domain is imported through its index.ts only. `depth` is how many folders below
 * src/ the importing file sits: that many `../` lead out of its own domain.
 */
function otherDomainsThroughIndex(depth) {
  return {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^(\\.\\./){${depth}}[a-z-]+/(?!index\\.js$).+`,
            message: "Import another domain through its index.ts (docs/architecture.md), not one of its files.",
          },
        ],
      },
    ],
  };
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.modelgate/', 'coverage/', 'test-artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-eval': 'error',
      'no-new-func': 'error',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: globals.browser },
  },
  // Type-aware rules for the product's code: a promise is awaited or handed on on purpose, and
  // a switch over a union names every member.
  {
    files: ['src/**/*.ts', 'web/src/**/*.{ts,tsx}'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  // The server's layers: no import cycles, and domains meet through their index.ts.
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver': undefined,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': 'error' },
  },
  { files: ['src/*/*.ts'], ignores: ['src/admin-api/index.ts'], rules: otherDomainsThroughIndex(1) },
  { files: ['src/*/*/*.ts'], rules: otherDomainsThroughIndex(2) },
  { files: ['src/*/*/*/*.ts'], rules: otherDomainsThroughIndex(3) },
  { files: ['src/*/*/*/*/*.ts'], rules: otherDomainsThroughIndex(4) },
);
