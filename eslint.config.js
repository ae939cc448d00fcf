// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const pureModules = ['src/core/**', 'src/rollout/**'];
/** I/O libraries, kept out of the pure modules and the planner. */
const IO_LIBRARIES = [
  '@kubernetes/*',
  'winston',
  'prom-client',
  'p-queue',
  'node:timers*',
  'yargs',
];
/**
 * Libraries without I/O that the pure modules may use. croner only reads cron expressions and
 * time zones here: it starts a timer only for a job given a function, which core/ never gives.
 */
const PURE_LIBRARIES = ['node:crypto', 're2js', 'croner'];
/** The watch server's files that start kube/'s list-watches and discovery. */
const WATCH_SERVER_EDGE = [
  'src/watch/kube-watches.ts',
  'src/watch/optional-apis.ts',
  'src/watch/watch-error-log.ts',
  'src/watch/watch-server.ts',
];

/**
 * core/ and rollout/ are pure (docs/architecture.md): an allow-list, so a new impure import is
 * rejected without anyone having to name it first. `scripts/lint-rules.test.ts` checks that imports
 * of time/, log/, app.ts and an I/O library are rejected and the allowed ones pass.
 */
export const PURE_MODULES_RULE = {
  files: pureModules,
  ignores: ['src/**/*.test.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            // Anything but a sibling, a file of core/ or rollout/, or a library named above.
            regex: `^(?!(\\./[^/]+|\\.\\./(core|rollout)/[^/]+|${PURE_LIBRARIES.join('|')})$)`,
            message:
              'core/ and rollout/ are pure: they import only core/, rollout/ and ' +
              PURE_LIBRARIES.join(', '),
          },
        ],
      },
    ],
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', '.cache/**', 'coverage/**', 'deploy/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  ...tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // client-node's request bodies are model classes; its documented usage passes object literals.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      complexity: ['error', 12],
      'max-params': ['error', 4],
      'max-depth': ['error', 3],
    },
  },
  {
    files: ['src/**'],
    ignores: [
      'src/kube/**',
      'src/app.ts',
      'src/app/**',
      'src/main.ts',
      'src/**/*.test.ts',
      'src/testing/**',
      'src/cli/**',
      ...WATCH_SERVER_EDGE,
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@kubernetes/client-node', '**/kube/*'],
              message: 'only kube/, the watch server edge and app.ts talk to the API server',
            },
          ],
        },
      ],
    },
  },
  // After the src/** block: for one file, the last block that sets a rule replaces the others.
  PURE_MODULES_RULE,
  {
    // The planner (docs/adr/0027): its input is gathered by the reconciler, it does no I/O itself.
    files: ['src/reconcile/plan/**'],
    ignores: ['src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: [...IO_LIBRARIES, 'node:*'], message: 'the planner is pure: no I/O' },
            {
              group: ['../*.ts', '../../*/**', '!../../core/**', '!../../rollout/**'],
              message: 'reconcile/plan/ imports only core/, rollout/ and plan/ (plan/model.ts)',
            },
          ],
        },
      ],
    },
  },
  {
    // The stores implement the reconciler's read ports (docs/adr/0027): types only, no runtime edge.
    files: ['src/watch/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../reconcile/**'],
              allowTypeImports: true,
              message: "watch/ may import the reconciler's ports as types only",
            },
          ],
        },
      ],
    },
  },
  {
    // The watch server starts kube/'s list-watches and discovery; client-node itself stays in kube/.
    files: WATCH_SERVER_EDGE,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@kubernetes/client-node'], message: 'only kube/ talks to client-node' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'e2e/**', 'scripts/**', 'helm/**'],
    rules: {
      complexity: 'off',
      'max-params': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
  prettier,
);
