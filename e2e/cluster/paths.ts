import path from 'node:path';

/** Repository root, derived from this file's place in e2e/cluster/. */
export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
export const CACHE_DIR = path.join(REPO_ROOT, '.cache');
/** One directory per control-plane run: certificates, tokens, etcd data, logs, pids.json. */
export const RUNS_DIR = path.join(CACHE_DIR, 'runs');
/** Logs that must outlive a run (kreload processes per spec). */
export const E2E_LOGS_DIR = path.join(CACHE_DIR, 'e2e-logs');
export const BUILD_SCRIPT = path.join(REPO_ROOT, 'e2e', 'cluster', 'build.sh');
export const AUDIT_POLICY = path.join(REPO_ROOT, 'e2e', 'cluster', 'audit-policy.yaml');
/** The pod and node lifecycle kwok plays on the fake nodes. */
export const KWOK_STAGES = path.join(REPO_ROOT, 'e2e', 'cluster', 'kwok', 'stages.yaml');
