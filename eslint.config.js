import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The blind faulty-variant sets (fixtures/*/blind-*.ts) are kept as their authors wrote them: type-checked and run by
// the self-test, not linted (see .prettierignore).
export default tseslint.config(
  { ignores: ['node_modules/', 'reports/', '**/*.d.ts', 'fixtures/*/blind-*.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        fetch: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      'no-control-regex': 'off',
      // Focused or unexplained skipped tests never land.
      'no-restricted-properties': [
        'error',
        { object: 'test', property: 'only', message: 'no focused tests' },
        { object: 'it', property: 'only', message: 'no focused tests' },
        { object: 'describe', property: 'only', message: 'no focused tests' },
        { object: 'test', property: 'skip', message: 'skip through the harness (notConfigured) with a reason' },
        { object: 'describe', property: 'skip', message: 'skip through the harness (notConfigured) with a reason' },
      ],
    },
  },
);
