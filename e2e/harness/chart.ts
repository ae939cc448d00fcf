// helm/kreload as specs use it without a kubelet: render a release with `helm template`, install only
// its ServiceAccount and RBAC into the shared cluster, and run kreload as a local process the way
// the rendered Deployment would run it (same args and environment, the ServiceAccount's token).
import {
  ApiException,
  KubernetesObjectApi,
  type KubernetesObject,
  type V1Container,
  type V1EnvVar,
} from '@kubernetes/client-node';
import { render, type KubeObject, type Rendered } from '../../helm/kreload/tests/chart-harness.ts';
import type { ClusterClient, RestrictedKubeconfig } from './cluster.ts';

/** The kinds a release needs before kreload can authenticate and be authorised, in apply order. */
export const CHART_IDENTITY_KINDS = [
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
] as const;

export interface ReleaseInput {
  /** fullnameOverride: every object's name. Unique per release, so ClusterRoles never clash. */
  readonly fullname: string;
  /** The release namespace; it must exist before install(). */
  readonly namespace: string;
  /** Values files relative to the chart, e.g. `ci/scoped-values.yaml`. */
  readonly files?: readonly string[];
  /** Values applied after the files (top-level keys replace the files' ones). */
  readonly values?: Readonly<Record<string, unknown>>;
}

export class ChartReleaseError extends Error {
  override readonly name = 'ChartReleaseError';
}

/** `helm template` of one release. */
export function renderRelease(helm: string, input: ReleaseInput): Promise<Rendered> {
  return render(helm, {
    files: input.files ?? [],
    values: { ...input.values, fullnameOverride: input.fullname },
    namespace: input.namespace,
  });
}

/** What the kubelet would start: the container's args and its resolved environment. */
export interface ContainerCommand {
  /** The container's args without --metrics-port, which startKreload chooses. */
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** The Pod a rendered Deployment would create, as far as the downward API exposes it. */
export interface PodIdentity {
  readonly name: string;
  readonly namespace: string;
}

const METRICS_PORT_FLAG = /^--metrics-port(=|$)/;

/** The downward-API fields the chart's env refers to. */
const FIELD_PATHS: Readonly<Record<string, (pod: PodIdentity) => string>> = {
  'metadata.name': (pod) => pod.name,
  'metadata.namespace': (pod) => pod.namespace,
};

function resolveEnvVar(variable: V1EnvVar, pod: PodIdentity): string {
  if (variable.value !== undefined) return variable.value;
  const fieldPath = variable.valueFrom?.fieldRef?.fieldPath;
  const resolve = fieldPath === undefined ? undefined : FIELD_PATHS[fieldPath];
  if (resolve === undefined) {
    throw new ChartReleaseError(
      `env ${variable.name}: only literal values and fieldRef ${Object.keys(FIELD_PATHS).join(', ')} ` +
        `can be resolved outside a Pod, got ${JSON.stringify(variable.valueFrom)}`,
    );
  }
  return resolve(pod);
}

/**
 * The kreload container as a command line. The image's entrypoint is `node dist/main.js`, so the
 * chart must set args only: a `command` would replace the entrypoint and is rejected here.
 */
export function containerCommand(container: V1Container, pod: PodIdentity): ContainerCommand {
  if (container.command !== undefined) {
    throw new ChartReleaseError(
      `the container sets command ${JSON.stringify(container.command)}; kreload's entrypoint would not run`,
    );
  }
  const args = container.args ?? [];
  if (!args.some((arg) => METRICS_PORT_FLAG.test(arg))) {
    throw new ChartReleaseError(`the container args carry no --metrics-port: ${args.join(' ')}`);
  }
  return {
    args: args.filter((arg) => !METRICS_PORT_FLAG.test(arg)),
    env: Object.fromEntries(
      (container.env ?? []).map((variable) => [variable.name, resolveEnvVar(variable, pod)]),
    ),
  };
}

function isIdentityKind(object: KubeObject): boolean {
  return CHART_IDENTITY_KINDS.some((kind) => kind === object.kind);
}

function applyOrder(object: KubeObject): number {
  return CHART_IDENTITY_KINDS.findIndex((kind) => kind === object.kind);
}

function describeObject(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return `${object.kind} ${namespace === undefined ? '' : `${namespace}/`}${name}`;
}

/**
 * The ServiceAccount and RBAC objects of one rendered release, created in the cluster as rendered.
 * uninstall() deletes what install() created, cluster-scoped objects included.
 */
export class ChartIdentityInstall {
  readonly #cluster: ClusterClient;
  readonly #rendered: Rendered;
  readonly #created: KubeObject[] = [];

  constructor(deps: { cluster: ClusterClient; rendered: Rendered }) {
    this.#cluster = deps.cluster;
    this.#rendered = deps.rendered;
  }

  /** The identity objects in apply order. */
  get objects(): KubeObject[] {
    return this.#rendered.objects
      .filter(isIdentityKind)
      .sort((a, b) => applyOrder(a) - applyOrder(b));
  }

  /** The ServiceAccount the rendered Deployment's Pods run as. */
  get serviceAccount(): PodIdentity {
    const deployment = this.#rendered.one('Deployment');
    const name = deployment.spec?.template.spec?.serviceAccountName;
    const namespace = deployment.metadata.namespace;
    if (name === undefined || namespace === undefined) {
      throw new ChartReleaseError('the rendered Deployment names no ServiceAccount or namespace');
    }
    return { name, namespace };
  }

  /** The container command of a Pod of the rendered Deployment named `podName`. */
  command(podName: string): ContainerCommand {
    return containerCommand(this.#rendered.container(), {
      name: podName,
      namespace: this.serviceAccount.namespace,
    });
  }

  async install(): Promise<void> {
    const api = KubernetesObjectApi.makeApiClient(this.#cluster.kc);
    for (const object of this.objects) {
      try {
        await api.create<KubernetesObject>(object);
      } catch (error) {
        throw new ChartReleaseError(`creating ${describeObject(object)} failed`, { cause: error });
      }
      this.#created.push(object);
    }
  }

  /** A kubeconfig with a fresh token of the release's ServiceAccount and nothing else. */
  async login(): Promise<RestrictedKubeconfig> {
    const { name, namespace } = this.serviceAccount;
    const token = await this.#cluster.mintToken(name, namespace, 3600);
    return this.#cluster.restrictedKubeconfig(token, name);
  }

  /** Deletes in reverse order; objects that are already gone (their namespace was) are skipped. */
  async uninstall(): Promise<void> {
    const api = KubernetesObjectApi.makeApiClient(this.#cluster.kc);
    for (const object of this.#created.splice(0).reverse()) {
      try {
        await api.delete(object);
      } catch (error) {
        if (!(error instanceof ApiException && error.code === 404)) throw error;
      }
    }
  }
}
