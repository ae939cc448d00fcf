// Every Deployment's rollout state for one change, sampled with one LIST every 200 ms while a
// wave row's window runs: wave-checks.ts judges the samples.
import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { appliedHash } from './fleet.ts';
import { deploymentComplete, type RollSample, type RollState } from './wave-checks.ts';
import type { SourceRef } from '../harness/sources.ts';

const INTERVAL_MS = 200;

export interface RollSamplerDeps {
  readonly kc: KubeConfig;
  readonly namespace: string;
  readonly source: SourceRef;
  /** A Deployment left out of the samples (a canary resumed after failing: never complete). */
  readonly exclude?: string;
}

export class RollSampler {
  readonly #deps: RollSamplerDeps;
  readonly #samples: RollSample[] = [];
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(deps: RollSamplerDeps) {
    this.#deps = deps;
  }

  /** Samples from now until stop(), against the change whose hash is `hash`. */
  start(hash: string): void {
    const apps = this.#deps.kc.makeApiClient(AppsV1Api);
    const loop = async (): Promise<void> => {
      while (!this.#stopped) {
        const at = Date.now();
        const list = await apps
          .listNamespacedDeployment({ namespace: this.#deps.namespace })
          .catch(() => undefined);
        if (list !== undefined) {
          const states = new Map<string, RollState>();
          const followed = list.items.filter((item) => item.metadata?.name !== this.#deps.exclude);
          for (const item of followed) {
            const rolled = appliedHash(this.#deps.source, item.spec?.template, undefined) === hash;
            const complete = deploymentComplete({
              generation: item.metadata?.generation ?? 0,
              observedGeneration: item.status?.observedGeneration ?? 0,
              replicas: item.spec?.replicas ?? 1,
              updatedReplicas: item.status?.updatedReplicas ?? 0,
              statusReplicas: item.status?.replicas ?? 0,
              availableReplicas: item.status?.availableReplicas ?? 0,
            });
            states.set(
              item.metadata?.name ?? '',
              rolled ? (complete ? 'complete' : 'progressing') : 'pending',
            );
          }
          this.#samples.push({ at, states });
        }
        await sleep(Math.max(0, at + INTERVAL_MS - Date.now()));
      }
    };
    this.#running = loop();
  }

  /** Deployments the latest sample saw rolled for the change. */
  get rolled(): number {
    const last = this.#samples.at(-1);
    return last === undefined ? 0 : [...last.states.values()].filter((s) => s !== 'pending').length;
  }

  /** Deployments the latest sample saw pending or in flight (Infinity before the first sample). */
  get unfinished(): number {
    const last = this.#samples.at(-1);
    return last === undefined
      ? Number.POSITIVE_INFINITY
      : [...last.states.values()].filter((s) => s !== 'complete').length;
  }

  async stop(): Promise<readonly RollSample[]> {
    this.#stopped = true;
    await this.#running;
    return this.#samples;
  }
}
