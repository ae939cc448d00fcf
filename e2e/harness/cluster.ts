import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { resolveBinDir } from '../cluster/binaries.ts';
import { bootControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { writeKubeconfig } from '../cluster/kubeconfig.ts';

/** What specs get from the global setup: plain data (it crosses vitest's provide/inject). */
export interface ClusterInfo {
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly caPath: string;
  /** Set when kube-apiserver writes an audit log (kreload's ServiceAccount only). */
  readonly auditLogPath?: string;
  /** Where helpers write per-cluster files (restricted kubeconfigs); deleted with the run. */
  readonly scratchDir: string;
}

export interface RestrictedKubeconfig {
  readonly kc: KubeConfig;
  readonly path: string;
}

/** Admin access to a test cluster plus the helpers specs need to set up identities and namespaces. */
export class ClusterClient {
  readonly info: ClusterInfo;
  /** Admin (system:masters) client configuration. */
  readonly kc: KubeConfig;

  constructor(deps: { info: ClusterInfo; kc: KubeConfig }) {
    this.info = deps.info;
    this.kc = deps.kc;
  }

  get kubeconfigPath(): string {
    return this.info.kubeconfigPath;
  }

  get server(): string {
    return this.info.server;
  }

  get caPath(): string {
    return this.info.caPath;
  }

  get auditLogPath(): string | undefined {
    return this.info.auditLogPath;
  }

  /** A bound token (TokenRequest API) for an existing ServiceAccount. */
  async mintToken(
    serviceAccount: string,
    namespace: string,
    expirationSeconds = 3600,
  ): Promise<string> {
    const core = this.kc.makeApiClient(CoreV1Api);
    const request = await core.createNamespacedServiceAccountToken({
      name: serviceAccount,
      namespace,
      body: { spec: { audiences: [], expirationSeconds } },
    });
    const token = request.status?.token;
    if (token === undefined || token === '') {
      throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
    }
    return token;
  }

  /** Creates `e2e-<prefix>-<random>` and returns its name. */
  async createNamespace(prefix: string): Promise<string> {
    const name = `e2e-${prefix}-${randomBytes(3).toString('hex')}`;
    await this.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
    return name;
  }

  /** A kubeconfig (file and client configuration) that authenticates with `token` only. */
  async restrictedKubeconfig(token: string, name = 'restricted'): Promise<RestrictedKubeconfig> {
    await mkdir(this.info.scratchDir, { recursive: true, mode: 0o700 });
    const filePath = path.join(
      this.info.scratchDir,
      `${name}-${randomBytes(3).toString('hex')}.kubeconfig`,
    );
    await writeKubeconfig(filePath, {
      server: this.server,
      caPath: this.caPath,
      userName: name,
      token,
    });
    const kc = new KubeConfig();
    kc.loadFromFile(filePath);
    return { kc, path: filePath };
  }
}

/** A cluster this process booted; stop() tears the control plane down. */
export class StartedCluster extends ClusterClient {
  readonly #controlPlane: ControlPlane;

  constructor(deps: { info: ClusterInfo; kc: KubeConfig; controlPlane: ControlPlane }) {
    super(deps);
    this.#controlPlane = deps.controlPlane;
  }

  get runDir(): string {
    return this.#controlPlane.info.runDir;
  }

  /** The control plane's processes and ports, for fault tests (etcd's client port, restarts). */
  get controlPlane(): ControlPlane {
    return this.#controlPlane;
  }

  stop(): Promise<void> {
    return this.#controlPlane.stop();
  }
}

export interface StartClusterOptions {
  readonly audit?: boolean;
  readonly controllers?: readonly string[];
  /** No kube-scheduler and no kwok: only to measure what they cost (see BootOptions). */
  readonly withoutPodLifecycle?: boolean;
  readonly onProgress?: (message: string) => void;
  readonly signal?: AbortSignal;
}

/** Builds the binaries if needed (a no-op when cached) and boots a fresh control plane. */
export async function startCluster(options: StartClusterOptions = {}): Promise<StartedCluster> {
  const binDir = await resolveBinDir();
  const controlPlane = await bootControlPlane({ binDir, ...options });
  const planeInfo = controlPlane.info;
  const info: ClusterInfo = {
    kubeconfigPath: planeInfo.kubeconfigPath,
    server: planeInfo.server,
    caPath: planeInfo.caPath,
    scratchDir: path.join(planeInfo.runDir, 'scratch'),
    ...(planeInfo.auditLogPath === undefined ? {} : { auditLogPath: planeInfo.auditLogPath }),
  };
  return new StartedCluster({ info, kc: loadKubeconfig(info.kubeconfigPath), controlPlane });
}

/** Attaches to a cluster described by the global setup. */
export function connectCluster(info: ClusterInfo): ClusterClient {
  return new ClusterClient({ info, kc: loadKubeconfig(info.kubeconfigPath) });
}

/**
 * Describes a cluster given by an admin kubeconfig (KRELOAD_E2E_KUBECONFIG), e.g. one started
 * with `cli.ts up` in another terminal. Its CA is written to a scratch directory if embedded.
 */
export async function describeExternalCluster(
  kubeconfigPath: string,
  auditLogPath?: string,
): Promise<ClusterInfo> {
  const kc = loadKubeconfig(kubeconfigPath);
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error(`${kubeconfigPath} has no current cluster`);
  const scratchDir = await mkdtemp(path.join(tmpdir(), 'kreload-e2e-'));
  let caPath = cluster.caFile;
  if (caPath === undefined) {
    if (cluster.caData === undefined)
      throw new Error(`${kubeconfigPath}: the current cluster has no CA`);
    caPath = path.join(scratchDir, 'ca.crt');
    await writeFile(caPath, Buffer.from(cluster.caData, 'base64'));
  }
  return {
    kubeconfigPath: path.resolve(kubeconfigPath),
    server: cluster.server,
    caPath,
    scratchDir,
    ...(auditLogPath === undefined ? {} : { auditLogPath }),
  };
}

function loadKubeconfig(filePath: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(filePath);
  return kc;
}
