/**
 * Readiness that works for any controller: a canary ConfigMap in its own namespace is rewritten
 * every 500 ms until the canary Deployment's template carries one of the hashes written in this
 * round. "Ready" thus means "reacts", which is what a benchmark needs, whatever the controller's
 * own health endpoints say.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExitInfo } from '../cluster/processes.ts';
import { KubeRaw, MERGE_PATCH } from './kube-raw.ts';
import { TemplateObserver } from './observer.ts';
import {
  collectionPath,
  NAMESPACES,
  objectPath,
  SOURCE_RESOURCES,
  WORKLOAD_RESOURCES,
  workloadKey,
} from './resources.ts';
import { hashesNamed } from './signals.ts';
import { dataPatch, sourceHash, sourceManifest, type SourceSpec } from './sources.ts';
import { envFrom, envNamesOf, workloadManifest, type WorkloadSpec } from './workloads.ts';

const WRITE_INTERVAL_MS = 500;
const CHECK_INTERVAL_MS = 50;
export const CANARY_LABEL = 'bench.kreload.io/canary';

export class ControllerExitedError extends Error {
  override readonly name = 'ControllerExitedError';
}

export class ReadyTimeoutError extends Error {
  override readonly name = 'ReadyTimeoutError';
}

export class Canary {
  readonly namespace: string;
  readonly #raw: KubeRaw;
  readonly #observer: TemplateObserver;
  readonly #clock: () => number;
  readonly #source: SourceSpec;
  readonly #workload: WorkloadSpec;
  readonly #labels: Readonly<Record<string, string>>;
  #version = 0;

  constructor(deps: { kc: KubeConfig; namespace: string; clock: () => number }) {
    this.namespace = deps.namespace;
    this.#raw = new KubeRaw({ kc: deps.kc });
    this.#clock = deps.clock;
    this.#labels = { [CANARY_LABEL]: deps.namespace };
    this.#source = {
      type: 'configmap',
      namespace: deps.namespace,
      name: 'canary',
      keys: [{ key: 'value', bytes: 32 }],
    };
    this.#workload = {
      kind: 'Deployment',
      namespace: deps.namespace,
      name: 'canary',
      uses: [envFrom('configmap', 'canary')],
    };
    this.#observer = new TemplateObserver({
      raw: this.#raw,
      kc: deps.kc,
      labelSelector: `${CANARY_LABEL}=${deps.namespace}`,
      clock: deps.clock,
    });
  }

  async start(): Promise<void> {
    await this.#raw.create(collectionPath(NAMESPACES), {
      metadata: { name: this.namespace, labels: this.#labels },
    });
    await this.#raw.create(
      collectionPath(SOURCE_RESOURCES.configmap, this.namespace),
      sourceManifest(this.#source, { versions: new Map(), labels: this.#labels }),
    );
    await this.#raw.create(
      collectionPath(WORKLOAD_RESOURCES.Deployment, this.namespace),
      workloadManifest(this.#workload, this.#labels),
    );
    await this.#observer.start();
  }

  async stop(): Promise<void> {
    await this.#observer.stop();
  }

  /** Rewrites the canary until the controller rolls it; resolves with when that was observed. */
  async awaitReaction(options: {
    timeoutMs: number;
    exitInfo: () => ExitInfo | undefined;
    signal?: AbortSignal;
  }): Promise<number> {
    const key = workloadKey('Deployment', this.namespace, 'canary');
    const lookup = { envNames: envNamesOf(this.#workload) };
    const firstRecord = this.#observer.workload(key)?.templates.length ?? 0;
    const written = new Set<string>();
    const deadline = this.#clock() + options.timeoutMs;
    let nextWrite = this.#clock();
    for (;;) {
      options.signal?.throwIfAborted();
      const exit = options.exitInfo();
      if (exit !== undefined) {
        throw new ControllerExitedError(
          `the controller exited (code ${String(exit.code)}, signal ${String(exit.signal)}) before it reacted`,
        );
      }
      const records = this.#observer.workload(key)?.templates.slice(firstRecord) ?? [];
      const reacted = records.find((record) =>
        [...hashesNamed(record.template, lookup, 'configmap/canary')].some((hash) =>
          written.has(hash),
        ),
      );
      if (reacted !== undefined) return reacted.at;
      const now = this.#clock();
      if (now > deadline) {
        throw new ReadyTimeoutError(
          `the controller did not roll the canary within ${options.timeoutMs / 1000} s`,
        );
      }
      if (now >= nextWrite) {
        this.#version += 1;
        written.add(sourceHash(this.#source, new Map([['value', this.#version]])));
        await this.#raw.patch({
          path: objectPath(SOURCE_RESOURCES.configmap, this.namespace, 'canary'),
          body: dataPatch(this.#source, 'value', this.#version),
          contentType: MERGE_PATCH,
        });
        nextWrite = now + WRITE_INTERVAL_MS;
      }
      await sleep(CHECK_INTERVAL_MS, undefined, { signal: options.signal });
    }
  }
}
