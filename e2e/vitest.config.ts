import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: path.resolve(import.meta.dirname, '..'),
    include: ['e2e/specs/**/*.e2e.test.ts'],
    environment: 'node',
    // Builds the control plane if needed (minutes when cold), then boots one cluster per run.
    globalSetup: ['e2e/harness/global-setup.ts'],
    // 2 cores shared with etcd, kube-apiserver and kube-controller-manager: one spec file at a time.
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
  },
});
