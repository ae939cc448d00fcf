/**
 * Kubeconfig lookup (§12.5). client-node's `loadFromDefault` silently falls back to
 * `http://localhost:8080`; this chooses explicitly and fails loudly instead.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

export type KubeConfigProblem = 'unreadable' | 'no-usable-context' | 'not-found';

export class KubeConfigError extends Error {
  readonly problem: KubeConfigProblem;
  /** The file (or in-cluster path) at fault, when there is one. */
  readonly path: string | undefined;

  constructor(
    message: string,
    details: { problem: KubeConfigProblem; path?: string | undefined; cause?: unknown },
  ) {
    super(message, { cause: details.cause });
    this.name = 'KubeConfigError';
    this.problem = details.problem;
    this.path = details.path;
  }
}

export interface LoadKubeConfigInput {
  /** `--kubeconfig`; empty counts as unset. */
  readonly kubeconfigFlag?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir?: string | undefined;
  /** Where the ServiceAccount files live; tests point it elsewhere. */
  readonly serviceAccountDir?: string;
  readonly fileExists?: (path: string) => boolean;
}

export interface LoadedKubeConfig {
  readonly kc: KubeConfig;
  /** Human-readable origin for the startup log, e.g. `$KUBECONFIG (/etc/kube.yaml)`. */
  readonly source: string;
  readonly warnings: readonly string[];
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Ports on which client-node's `loadFromCluster` speaks plain HTTP. */
const PLAIN_HTTP_PORTS = new Set(['80', '8080', '8001']);

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** As kubectl merges a KUBECONFIG list: the first file's current-context and entries win. */
function mergeFirstWins(into: KubeConfig, from: KubeConfig): void {
  const known = (list: readonly { name: string }[], name: string): boolean =>
    list.some((entry) => entry.name === name);
  for (const cluster of from.getClusters()) {
    if (!known(into.getClusters(), cluster.name)) into.addCluster(cluster);
  }
  for (const user of from.getUsers()) {
    if (!known(into.getUsers(), user.name)) into.addUser(user);
  }
  for (const context of from.getContexts()) {
    if (!known(into.getContexts(), context.name)) into.addContext(context);
  }
  if (!into.getCurrentContext()) into.setCurrentContext(from.getCurrentContext());
}

function loadFiles(files: readonly string[]): KubeConfig {
  const kc = new KubeConfig();
  files.forEach((file, index) => {
    try {
      if (index === 0) {
        kc.loadFromFile(file);
      } else {
        const other = new KubeConfig();
        other.loadFromFile(file);
        mergeFirstWins(kc, other);
      }
    } catch (err) {
      throw new KubeConfigError(`cannot load kubeconfig ${file}: ${errorText(err)}`, {
        problem: 'unreadable',
        path: file,
        cause: err,
      });
    }
  });
  return kc;
}

function checkUsable(kc: KubeConfig, origin: string): void {
  const fail = (why: string): never => {
    throw new KubeConfigError(`kubeconfig ${origin}: ${why}`, {
      problem: 'no-usable-context',
      path: origin,
    });
  };
  const contextName = kc.getCurrentContext();
  if (!contextName) fail('no current-context');
  const context = kc.getContextObject(contextName);
  if (!context) return fail(`current-context "${contextName}" is not defined`);
  const cluster = kc.getCluster(context.cluster);
  if (!cluster) return fail(`context "${contextName}" names unknown cluster "${context.cluster}"`);
  if (!cluster.server) fail(`cluster "${cluster.name}" has no server`);
  if (cluster.server.startsWith('http:') && !cluster.skipTLSVerify) {
    fail(`cluster "${cluster.name}" uses http:// without insecure-skip-tls-verify`);
  }
}

export interface InClusterInput {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly serviceAccountDir?: string;
  readonly fileExists?: (path: string) => boolean;
}

/**
 * The in-cluster service account config. `loadFromCluster` reads `process.env`; this builds the
 * same config from the given env.
 */
export function loadInClusterKubeConfig(input: InClusterInput): KubeConfig {
  const { env } = input;
  const dir = input.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const exists = input.fileExists ?? existsSync;
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  const tokenFile = join(dir, 'token');
  if (!exists(tokenFile)) {
    throw new KubeConfigError(
      `KUBERNETES_SERVICE_HOST is set but the service account token ${tokenFile} does not exist`,
      { problem: 'not-found', path: tokenFile },
    );
  }
  const namespaceFile = join(dir, 'namespace');
  const namespace = exists(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : undefined;
  const scheme = PLAIN_HTTP_PORTS.has(port) ? 'http' : 'https';
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'inCluster',
        server: `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`,
        caFile: join(dir, 'ca.crt'),
        skipTLSVerify: false,
      },
    ],
    // The tokenFile provider re-reads the token every 60 s, so bound-token rotation works.
    users: [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile } } }],
    contexts: [
      { name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', namespace },
    ],
    currentContext: 'inClusterContext',
  });
  return kc;
}

/**
 * Loads kubeconfig files (the first one's current-context wins) and checks that the current
 * context is usable. For callers that chose the file themselves (config/'s lookup).
 */
export function loadKubeConfigFiles(files: readonly string[]): KubeConfig {
  const kc = loadFiles(files);
  checkUsable(kc, files.join(delimiter));
  return kc;
}

function fromFiles(files: readonly string[], source: string, warnings: string[]): LoadedKubeConfig {
  return { kc: loadKubeConfigFiles(files), source, warnings };
}

export function loadKubeConfig(input: LoadKubeConfigInput): LoadedKubeConfig {
  const exists = input.fileExists ?? existsSync;
  const warnings: string[] = [];
  if (input.kubeconfigFlag) {
    return fromFiles([input.kubeconfigFlag], `--kubeconfig (${input.kubeconfigFlag})`, warnings);
  }
  const envFiles = (input.env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
  const present = envFiles.filter((f) => exists(f));
  const missing = envFiles.filter((f) => !present.includes(f));
  if (missing.length > 0) {
    warnings.push(`KUBECONFIG names ${missing.join(', ')}, which does not exist; ignoring it`);
  }
  if (present.length > 0) {
    return fromFiles(present, `$KUBECONFIG (${present.join(delimiter)})`, warnings);
  }
  const homeConfig = input.homeDir ? join(input.homeDir, '.kube', 'config') : undefined;
  if (homeConfig !== undefined && exists(homeConfig)) {
    return fromFiles([homeConfig], `~/.kube/config (${homeConfig})`, warnings);
  }
  if (input.env.KUBERNETES_SERVICE_HOST) {
    return {
      kc: loadInClusterKubeConfig({ ...input, fileExists: exists }),
      source: 'in-cluster service account',
      warnings,
    };
  }
  throw new KubeConfigError(
    'no kubeconfig found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config or run in a cluster',
    { problem: 'not-found' },
  );
}
