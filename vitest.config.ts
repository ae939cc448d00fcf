import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'src/**/*.test.ts',
      'scripts/**/*.test.ts',
      'helm/**/*.test.ts',
      'e2e/bench/**/*.test.ts',
      'e2e/harness/**/*.test.ts',
      'e2e/cluster/**/*.test.ts',
      'e2e/chaos/**/*.test.ts',
    ],
    environment: 'node',
  },
});
