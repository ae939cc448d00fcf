// The CRDs of kreload's optional integrations (§2.1, §2.2) on a test cluster: copied out of the
// projects' Go modules by e2e/cluster/crds.sh, applied with the admin identity, and waited for
// until kube-apiserver serves them. No Argo, CSI or OpenShift controller runs: specs create the
// custom objects (and their status) themselves through KubeJson, which sends and returns wire JSON
// (client-node's typed models would drop fields of objects they do not know).
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request, type RequestOptions } from 'node:https';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { REPO_ROOT } from '../cluster/paths.ts';
import type { ClusterClient } from './cluster.ts';
import { pollUntil } from './poll.ts';

export const CRDS_SCRIPT = path.join(REPO_ROOT, 'e2e', 'cluster', 'crds.sh');
const ESTABLISHED_TIMEOUT_MS = 60_000;

/** An API one of the optional CRDs serves. */
export interface CustomApi {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

export type OptionalApiName =
  'rollouts' | 'secretproviderclasses' | 'secretproviderclasspodstatuses' | 'deploymentconfigs';

interface OptionalApiRow extends CustomApi {
  /** Manifest in the directory crds.sh prints. */
  readonly file: string;
  readonly crdName: string;
}

/** One row per API: where its CRD comes from and what it serves. */
export const OPTIONAL_APIS: Readonly<Record<OptionalApiName, OptionalApiRow>> = {
  rollouts: {
    file: 'rollout-crd.yaml',
    crdName: 'rollouts.argoproj.io',
    group: 'argoproj.io',
    version: 'v1alpha1',
    plural: 'rollouts',
    kind: 'Rollout',
  },
  secretproviderclasses: {
    file: 'secrets-store.csi.x-k8s.io_secretproviderclasses.yaml',
    crdName: 'secretproviderclasses.secrets-store.csi.x-k8s.io',
    group: 'secrets-store.csi.x-k8s.io',
    version: 'v1',
    plural: 'secretproviderclasses',
    kind: 'SecretProviderClass',
  },
  secretproviderclasspodstatuses: {
    file: 'secrets-store.csi.x-k8s.io_secretproviderclasspodstatuses.yaml',
    crdName: 'secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io',
    group: 'secrets-store.csi.x-k8s.io',
    version: 'v1',
    plural: 'secretproviderclasspodstatuses',
    kind: 'SecretProviderClassPodStatus',
  },
  deploymentconfigs: {
    file: 'deploymentconfig-crd.yaml',
    crdName: 'deploymentconfigs.apps.openshift.io',
    group: 'apps.openshift.io',
    version: 'v1',
    plural: 'deploymentconfigs',
    kind: 'DeploymentConfig',
  },
};

/** Both CSI kinds: kreload watches them together (§2.1). */
export const CSI_APIS: readonly OptionalApiName[] = [
  'secretproviderclasses',
  'secretproviderclasspodstatuses',
];

export class CrdError extends Error {
  override readonly name = 'CrdError';
}

// ---------------------------------------------------------------------------------------------
// Wire JSON

export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';

export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `keys` inside nested objects, or undefined where the path stops. */
export function valueAt(object: unknown, keys: readonly string[]): unknown {
  let current: unknown = object;
  for (const key of keys) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

export function recordAt(object: unknown, keys: readonly string[]): JsonRecord {
  const value = valueAt(object, keys);
  return isRecord(value) ? value : {};
}

export function stringAt(object: unknown, keys: readonly string[]): string | undefined {
  const value = valueAt(object, keys);
  return typeof value === 'string' ? value : undefined;
}

/** String values of the map at `keys` (annotations, labels). */
export function stringMapAt(object: unknown, keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    Object.entries(recordAt(object, keys)).flatMap(([key, value]) =>
      typeof value === 'string' ? [[key, value]] : [],
    ),
  );
}

export function arrayAt(object: unknown, keys: readonly string[]): unknown[] {
  const value = valueAt(object, keys);
  return Array.isArray(value) ? (value as unknown[]) : [];
}

/** A non-2xx answer from kube-apiserver. */
export class KubeJsonError extends Error {
  override readonly name = 'KubeJsonError';
  readonly status: number;

  constructor(details: { message: string; status: number }) {
    super(details.message);
    this.status = details.status;
  }
}

export function isHttpStatus(error: unknown, status: number): boolean {
  return error instanceof KubeJsonError && error.status === status;
}

export interface KubeJsonRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Absolute path with query, e.g. `/apis/argoproj.io/v1alpha1/namespaces/x/rollouts/web`. */
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
}

/** Requests with the admin identity of a kubeconfig; bodies and answers are plain JSON. */
export class KubeJson {
  readonly #kc: KubeConfig;

  constructor(deps: { kc: KubeConfig }) {
    this.#kc = deps.kc;
  }

  /** The admin identity the requests use, for the harness's typed clients. */
  get kubeConfig(): KubeConfig {
    return this.#kc;
  }

  async request(req: KubeJsonRequest): Promise<unknown> {
    const cluster = this.#kc.getCurrentCluster();
    if (cluster === null) throw new CrdError('kubeconfig has no current cluster');
    const url = new URL(cluster.server);
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    const options: RequestOptions = {
      method: req.method,
      hostname: url.hostname,
      port: url.port,
      path: req.path,
      headers: {
        Accept: 'application/json',
        ...(payload === undefined ? {} : { 'Content-Type': req.contentType ?? 'application/json' }),
      },
      timeout: 30_000,
    };
    await this.#kc.applyToHTTPSOptions(options);
    const { status, text } = await send(options, payload);
    if (status < 200 || status > 299) {
      throw new KubeJsonError({
        message: `${req.method} ${req.path}: ${String(status)} ${text}`,
        status,
      });
    }
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }

  get(pathname: string): Promise<unknown> {
    return this.request({ method: 'GET', path: pathname });
  }
}

function send(
  options: RequestOptions,
  payload: string | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new CrdError(`${options.method ?? ''} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** `/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>]`. */
export function customObjectPath(
  api: CustomApi,
  location: { readonly namespace?: string; readonly name?: string } = {},
): string {
  const scope = location.namespace === undefined ? '' : `/namespaces/${location.namespace}`;
  const name = location.name === undefined ? '' : `/${location.name}`;
  return `/apis/${api.group}/${api.version}${scope}/${api.plural}${name}`;
}

// ---------------------------------------------------------------------------------------------
// Installation

/** Runs e2e/cluster/crds.sh (a no-op when its copy is complete) and returns its directory. */
export function crdDirectory(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [CRDS_SCRIPT], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.once('error', (error) => {
      reject(new CrdError(`could not run bash ${CRDS_SCRIPT}`, { cause: error }));
    });
    child.once('close', (code) => {
      const lastLine = stdout.trimEnd().split('\n').at(-1) ?? '';
      if (code === 0 && lastLine !== '') resolve(lastLine);
      else reject(new CrdError(`bash ${CRDS_SCRIPT} failed with exit code ${String(code)}`));
    });
  });
}

async function readCrd(directory: string, row: OptionalApiRow): Promise<JsonRecord> {
  const file = path.join(directory, row.file);
  const documents = loadAll(await readFile(file, 'utf8'));
  const crd = documents.find(
    (doc) =>
      stringAt(doc, ['kind']) === 'CustomResourceDefinition' &&
      stringAt(doc, ['metadata', 'name']) === row.crdName,
  );
  if (!isRecord(crd)) throw new CrdError(`${file} holds no CRD named ${row.crdName}`);
  return crd;
}

function isEstablished(crd: unknown): boolean {
  return arrayAt(crd, ['status', 'conditions']).some(
    (condition) =>
      stringAt(condition, ['type']) === 'Established' && stringAt(condition, ['status']) === 'True',
  );
}

/** True when `/apis/<group>/<version>` lists the API's plural: what kreload's discovery asks. */
export async function isApiServed(client: KubeJson, api: CustomApi): Promise<boolean> {
  try {
    const resources = await client.get(`/apis/${api.group}/${api.version}`);
    return arrayAt(resources, ['resources']).some(
      (resource) => stringAt(resource, ['name']) === api.plural,
    );
  } catch (error) {
    if (isHttpStatus(error, 404)) return false;
    throw error;
  }
}

/**
 * Deletes the CRDs of `apis` (their objects go with them) and waits until discovery no longer
 * lists them. Specs on the shared cluster call it in afterAll: later spec files expect a cluster
 * without these APIs (e.g. "rollouts absent" in /readyz).
 */
export async function uninstallCrds(
  cluster: ClusterClient,
  apis: readonly OptionalApiName[],
): Promise<void> {
  const client = new KubeJson({ kc: cluster.kc });
  for (const name of apis) {
    const row = OPTIONAL_APIS[name];
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${row.crdName}`;
    try {
      await client.request({ method: 'DELETE', path: crdPath });
    } catch (error) {
      if (!isHttpStatus(error, 404)) throw error;
    }
    await pollUntil(
      async () => {
        try {
          await client.get(crdPath);
          return false;
        } catch (error) {
          if (!isHttpStatus(error, 404)) throw error;
        }
        return !(await isApiServed(client, row));
      },
      { timeoutMs: ESTABLISHED_TIMEOUT_MS, describe: `CRD ${row.crdName} to be gone` },
    );
  }
}

/**
 * Server-side applies the CRDs of `apis` (idempotent: every spec file may install them on the
 * shared cluster) and waits until each is Established and listed by discovery.
 */
export async function installCrds(
  cluster: ClusterClient,
  apis: readonly OptionalApiName[],
): Promise<void> {
  const directory = await crdDirectory();
  const client = new KubeJson({ kc: cluster.kc });
  for (const name of apis) {
    const row = OPTIONAL_APIS[name];
    const crd = await readCrd(directory, row);
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${row.crdName}`;
    await client.request({
      method: 'PATCH',
      path: `${crdPath}?fieldManager=kreload-e2e&force=true`,
      body: crd,
      contentType: APPLY_PATCH,
    });
    await pollUntil(async () => isEstablished(await client.get(crdPath)), {
      timeoutMs: ESTABLISHED_TIMEOUT_MS,
      describe: `CRD ${row.crdName} to be Established`,
    });
    await pollUntil(() => isApiServed(client, row), {
      timeoutMs: ESTABLISHED_TIMEOUT_MS,
      describe: `discovery to list ${row.plural} in ${row.group}/${row.version}`,
    });
  }
}
