/**
 * The optional APIs (§2.2: Argo Rollouts, DeploymentConfigs, the CSI secrets-store kinds) and
 * whether each is served. Discovery answers "served", "absent" (404) or fails; a failure (503 from
 * an unavailable aggregated API, 403, a network error) is not "absent" (ADR 0021): the API is
 * shown as `error` and asked again with backoff until discovery answers. An absent API is asked
 * again at each resync, so a CRD installed later is picked up without a restart.
 */
import { toApiError } from '../kube/api-error.ts';
import { backoffDelay } from '../kube/list-watch-timing.ts';
import type { Timers } from '../time/timers.ts';

export type ApiAvailability = 'served' | 'absent' | 'error';

export interface OptionalApi {
  /** Stable name for logs and the callbacks, e.g. the workload kind or `csi`. */
  readonly name: string;
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export interface OptionalApisDeps {
  readonly discovery: {
    isApiServed(group: string, version: string, plural: string): Promise<boolean>;
  };
  readonly timers: Timers;
  readonly random: () => number;
  /** An API that was absent or failing is now served: start watching it. */
  readonly onServed: (api: OptionalApi) => Promise<void>;
  /** Discovery of `api` failed; it is retried after `retryInMs`. */
  readonly onError: (api: OptionalApi, error: Error, retryInMs: number) => void;
  /** Discovery of `api` answered again after failing. */
  readonly onRecovered?: (api: OptionalApi, availability: 'served' | 'absent') => void;
}

interface ApiState {
  availability: ApiAvailability;
  failures: number;
  cancelRetry: (() => void) | undefined;
}

export class OptionalApis {
  readonly #deps: OptionalApisDeps;
  readonly #states = new Map<OptionalApi, ApiState>();
  #stopped = false;

  /** A method, not the field: TypeScript would narrow the field across awaits. */
  #isStopped(): boolean {
    return this.#stopped;
  }

  constructor(deps: OptionalApisDeps) {
    this.#deps = deps;
  }

  /** The last answer for `api`; `undefined` before it was first asked. */
  availability(api: OptionalApi): ApiAvailability | undefined {
    return this.#states.get(api)?.availability;
  }

  /** Asks once at startup; the caller watches a served API itself. Never rejects. */
  async probe(api: OptionalApi): Promise<ApiAvailability> {
    return this.#ask(api, this.#state(api));
  }

  /** At a resync: asks again for every absent API and starts the served ones. */
  async recheckAbsent(): Promise<void> {
    for (const [api, state] of this.#states) {
      if (state.availability !== 'absent' || this.#isStopped()) continue;
      if ((await this.#ask(api, state)) === 'served') await this.#deps.onServed(api);
    }
  }

  /** Cancels pending retries. */
  stop(): void {
    this.#stopped = true;
    for (const state of this.#states.values()) state.cancelRetry?.();
  }

  #state(api: OptionalApi): ApiState {
    let state = this.#states.get(api);
    if (state === undefined) {
      state = { availability: 'absent', failures: 0, cancelRetry: undefined };
      this.#states.set(api, state);
    }
    return state;
  }

  async #ask(api: OptionalApi, state: ApiState): Promise<ApiAvailability> {
    const { discovery } = this.#deps;
    const failed = state.failures > 0;
    try {
      const served = await discovery.isApiServed(api.group, api.version, api.plural);
      state.availability = served ? 'served' : 'absent';
      state.failures = 0;
      if (failed) this.#deps.onRecovered?.(api, state.availability);
    } catch (err) {
      state.availability = 'error';
      this.#scheduleRetry(api, state, toApiError(err));
    }
    return state.availability;
  }

  #scheduleRetry(api: OptionalApi, state: ApiState, error: Error): void {
    if (this.#isStopped()) return;
    const delay = backoffDelay(state.failures, this.#deps.random);
    state.failures += 1;
    this.#deps.onError(api, error, delay);
    state.cancelRetry?.();
    state.cancelRetry = this.#deps.timers.schedule(delay, () => {
      state.cancelRetry = undefined;
      void this.#retry(api, state);
    });
  }

  async #retry(api: OptionalApi, state: ApiState): Promise<void> {
    if (this.#isStopped()) return;
    if ((await this.#ask(api, state)) === 'served' && !this.#isStopped()) {
      await this.#deps.onServed(api);
    }
  }
}
