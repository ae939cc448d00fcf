// Many Deployments tracking one ConfigMap through envFrom and `reloader.stakater.com/auto`, read
// back with two LIST calls (Deployments and ReplicaSets) however many there are: the operability
// specs (fan-out, shutdown, HA) need the state of 50 workloads at once, not 50 GETs.
import { AppsV1Api, Watch, type KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { AUTO, BASELINE } from './annotations.ts';
import { pollUntil } from './poll.ts';
import { envVarName, sourceKey } from './sources.ts';
import { APP, podSpec, WorkloadClient } from './workloads.ts';

export interface FleetMember {
  readonly name: string;
  /** The app container's STAKATER_<CM>_CONFIGMAP value, if any. */
  readonly envHash: string | undefined;
  /** The W baseline entry for the ConfigMap, if any. */
  readonly baselineHash: string | undefined;
  /** ReplicaSets this Deployment controls: one per distinct pod template it ever had. */
  readonly replicaSets: number;
  readonly generation: number;
  readonly observedGeneration: number;
}

export interface FleetDeps {
  readonly kc: KubeConfig;
  readonly namespace: string;
  /** Deployment names are `<prefix>-<index>` (index from 0, two digits at least). */
  readonly prefix: string;
  readonly size: number;
  readonly configMap: string;
  /** W annotations; default `{ reloader.stakater.com/auto: "true" }`. */
  readonly annotations?: Readonly<Record<string, string>>;
}

const CREATE_BATCH = 10;

function baselineEntry(deployment: V1Deployment, key: string): string | undefined {
  const raw = deployment.metadata?.annotations?.[BASELINE];
  if (raw === undefined) return undefined;
  const parsed: unknown = JSON.parse(raw);
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const value: unknown = Reflect.get(parsed, key);
  return typeof value === 'string' ? value : undefined;
}

export class DeploymentFleet {
  readonly #deps: FleetDeps;
  readonly #apps: AppsV1Api;

  constructor(deps: FleetDeps) {
    this.#deps = deps;
    this.#apps = deps.kc.makeApiClient(AppsV1Api);
  }

  get names(): string[] {
    return Array.from(
      { length: this.#deps.size },
      (_unused, index) => `${this.#deps.prefix}-${String(index).padStart(2, '0')}`,
    );
  }

  /** The fleet's Deployments as workload references (e.g. for the baseline store's records). */
  get refs(): { readonly kind: 'Deployment'; readonly namespace: string; readonly name: string }[] {
    return this.names.map((name) => ({
      kind: 'Deployment' as const,
      namespace: this.#deps.namespace,
      name,
    }));
  }

  get envVar(): string {
    return envVarName({ type: 'CONFIGMAP', name: this.#deps.configMap });
  }

  async create(): Promise<void> {
    const workloads = new WorkloadClient({ kc: this.#deps.kc });
    const names = this.names;
    for (let start = 0; start < names.length; start += CREATE_BATCH) {
      await Promise.all(
        names.slice(start, start + CREATE_BATCH).map((name) =>
          workloads.create('Deployment', {
            namespace: this.#deps.namespace,
            name,
            annotations: this.#deps.annotations ?? { [AUTO]: 'true' },
            podSpec: podSpec({
              app: { envFrom: [{ configMapRef: { name: this.#deps.configMap } }] },
            }),
          }),
        ),
      );
    }
  }

  /** Every Deployment of the fleet, by name; a missing one is an error. */
  async members(): Promise<Map<string, FleetMember>> {
    const { namespace } = this.#deps;
    const [deployments, replicaSets] = await Promise.all([
      this.#apps.listNamespacedDeployment({ namespace }),
      this.#apps.listNamespacedReplicaSet({ namespace }),
    ]);
    const replicaSetsByOwner = new Map<string, number>();
    for (const rs of replicaSets.items) {
      const owner = rs.metadata?.ownerReferences?.find((ref) => ref.controller === true);
      if (owner !== undefined) {
        replicaSetsByOwner.set(owner.uid, (replicaSetsByOwner.get(owner.uid) ?? 0) + 1);
      }
    }
    const key = sourceKey({ type: 'CONFIGMAP', name: this.#deps.configMap });
    const byName = new Map(deployments.items.map((d) => [d.metadata?.name ?? '', d]));
    const members = new Map<string, FleetMember>();
    for (const name of this.names) {
      const deployment = byName.get(name);
      if (deployment === undefined) throw new Error(`Deployment ${namespace}/${name} is missing`);
      const app = deployment.spec?.template.spec?.containers.find((c) => c.name === APP);
      members.set(name, {
        name,
        envHash: app?.env?.find((variable) => variable.name === this.envVar)?.value,
        baselineHash: baselineEntry(deployment, key),
        replicaSets: replicaSetsByOwner.get(deployment.metadata?.uid ?? '') ?? 0,
        generation: deployment.metadata?.generation ?? 0,
        observedGeneration: deployment.status?.observedGeneration ?? 0,
      });
    }
    return members;
  }

  /** Polls members() until `accept` holds for every one of them. */
  waitForAll(
    accept: (member: FleetMember) => boolean,
    options: { readonly describe: string; readonly timeoutMs?: number },
  ): Promise<Map<string, FleetMember>> {
    let lastMisses = '';
    return pollUntil(
      async () => {
        const members = await this.members();
        const misses = [...members.values()].filter((member) => !accept(member));
        lastMisses = misses
          .slice(0, 3)
          .map((m) => JSON.stringify(m))
          .join('; ');
        return misses.length === 0 ? members : undefined;
      },
      {
        timeoutMs: options.timeoutMs ?? 60_000,
        intervalMs: 250,
        get describe(): string {
          return `${options.describe} (first misses: ${lastMisses})`;
        },
      },
    );
  }

  /**
   * Resolves with the name of the first Deployment whose app container gets `envHash`, seen
   * through a watch (not a poll), so a spec can act within milliseconds of kreload's first roll.
   */
  async watchForFirstEnvHash(envHash: string, timeoutMs = 60_000): Promise<string> {
    const { namespace } = this.#deps;
    const envVar = this.envVar;
    const listed = await this.#apps.listNamespacedDeployment({ namespace, limit: 1 });
    const match = Promise.withResolvers<string>();
    const controller = await new Watch(this.#deps.kc).watch(
      `/apis/apps/v1/namespaces/${namespace}/deployments`,
      { resourceVersion: listed.metadata?.resourceVersion },
      (phase: string, object: V1Deployment) => {
        const app = object.spec?.template.spec?.containers.find((c) => c.name === APP);
        const value = app?.env?.find((variable) => variable.name === envVar)?.value;
        if (phase === 'MODIFIED' && value === envHash) match.resolve(object.metadata?.name ?? '');
      },
      (error: unknown) => {
        match.reject(new Error(`Deployment watch ended: ${String(error)}`));
      },
    );
    const timer = setTimeout(() => {
      match.reject(
        new Error(`no Deployment in ${namespace} got ${envVar}=${envHash} in ${timeoutMs} ms`),
      );
    }, timeoutMs);
    try {
      return await match.promise;
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  }

  /** How many members satisfy `accept` right now. */
  async count(accept: (member: FleetMember) => boolean): Promise<number> {
    return [...(await this.members()).values()].filter(accept).length;
  }
}
