/**
 * Roll admission through kreload's real parts, wired by src/app/pipeline.ts as in
 * pipeline.test.ts: ten Deployments share one Secret, and the in-memory API server records every
 * PATCH. The "deployment controller" here is the test: it moves each rollout's status to
 * complete or failed. Fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../core/api-error.ts';
import { workloadKey } from '../core/keys.ts';
import type { ReloadPolicyView } from '../core/reload-policy.ts';
import type { WorkloadRef, WorkloadView } from '../core/types.ts';
import {
  BASELINE,
  DEFAULT_ANNOTATION_KEYS as KEYS,
  ROLLOUT_FAILED,
  ROLLOUT_HALTED,
  ROLLOUT_PRIORITY,
} from '../core/types.ts';
import type { ReplicaSetStatusView } from '../rollout/rollout-status.ts';
import { type RolloutSettings, UNLIMITED_ROLLOUTS } from '../rollout/waves.ts';
import type { JsonObject } from '../core/json.ts';
import type { StoreObject } from '../kube/baseline-records.ts';
import { recordKey } from '../kube/baseline-records.ts';
import type { KubeBaselineStore } from '../kube/baseline-store.ts';
import { projectStoreObject, REMOVAL_FLUSH_INTERVAL_MS } from '../kube/baseline-store.ts';
import type { ListWatchConsumer } from '../kube/list-watch.ts';
import type { KubeTransport } from '../kube/transport.ts';
import { aContainer, aSecret, aWorkload } from '../testing/builders.ts';
import { aPipelineBaselineStore, InMemoryConfigMaps } from '../testing/in-memory-config-maps.ts';
import {
  InMemoryCluster,
  annotationsOf,
  isRoll,
  startPipeline,
} from '../testing/in-memory-cluster.ts';
import { aPolicy } from '../testing/policies.ts';

const NS = 'team-a';
const NS_B = 'team-b';
/** kreload's own namespace: the baseline store's ConfigMaps. */
const HOME = 'kreload-system';
const OLD = '1'.repeat(40);
const BAD = '2'.repeat(40);
const FIX = '3'.repeat(40);
const SYNC_DELAY_MS = 1_000;
const WAVES: RolloutSettings = {
  ...UNLIMITED_ROLLOUTS,
  waves: true,
  canary: { count: 1 },
  maxConcurrent: 3,
};

function rolloutStatus(
  generation: number,
  outcome: 'complete' | 'failed' | 'progressing',
): ReplicaSetStatusView {
  return {
    model: 'replica-set',
    observedGeneration: generation,
    desired: 1,
    replicas: 1,
    updated: outcome === 'complete' ? 1 : 0,
    available: outcome === 'complete' ? 1 : 0,
    unavailable: outcome === 'complete' ? 0 : 1,
    progressing:
      outcome === 'failed'
        ? { status: 'False', reason: 'ProgressDeadlineExceeded' }
        : { status: 'True', reason: 'NewReplicaSetAvailable' },
  };
}

function deployment(
  name: string,
  annotations: Record<string, string> = {},
  rolledFor?: { readonly hash: string; readonly outcome: 'complete' | 'failed' | 'progressing' },
  namespace = NS,
): WorkloadView {
  const container = aContainer('app').withEnvFrom('secret', 'db');
  let builder = aWorkload('Deployment', namespace, name)
    .withResourceVersion('10')
    .withGeneration(rolledFor ? 2 : 1)
    .withAnnotation(KEYS.auto, 'true')
    .withContainer(
      rolledFor ? container.withStakaterEnv('STAKATER_DB_SECRET', rolledFor.hash) : container,
    );
  if (!rolledFor) builder = builder.withAnnotation(BASELINE, `{"secret/db":"${OLD}"}`);
  for (const [key, value] of Object.entries(annotations)) {
    builder = builder.withAnnotation(key, value);
  }
  const status = rolledFor ? rolloutStatus(2, rolledFor.outcome) : rolloutStatus(1, 'complete');
  return { ...builder.build(), rolloutStatus: status };
}

/**
 * `--baseline-store=namespace` (docs/adr/0046) on the in-memory server: the store's ConfigMaps in
 * kreload's namespace, and its watch, which delivers each write `lagMs()` after it is answered.
 */
function baselineStoreOn(lagMs: () => number) {
  const configMaps = new InMemoryConfigMaps(HOME);
  let consumer: ListWatchConsumer<StoreObject> | undefined;
  /** The process whose store may reach the server: an earlier one was killed (-9). */
  let alive = 0;
  const transportOf = (process: number): KubeTransport => ({
    request: async (request) => {
      // A killed process sends nothing more.
      if (process !== alive) return new Promise<never>(() => undefined);
      const served = (await configMaps.request(request)) as JsonObject;
      const object = projectStoreObject(served);
      const to = consumer;
      setTimeout(() => to?.upsert(object, false), lagMs());
      return served;
    },
  });
  /** One process's store, listed from the ConfigMaps as they are now; the previous one is dead. */
  const open = (): KubeBaselineStore => {
    alive += 1;
    const store = aPipelineBaselineStore(transportOf(alive), { namespace: HOME });
    consumer = store.consumer;
    store.consumer.replace(configMaps.observed(), '1');
    return store;
  };
  /** The records as the server holds them: data key → value. */
  const records = (): Record<string, string> =>
    Object.fromEntries(configMaps.observed().flatMap((object) => [...object.data]));
  return { configMaps, open, records };
}

function cluster(
  settings: RolloutSettings | undefined,
  workloads: readonly WorkloadView[],
  secretHash = OLD,
  policies?: readonly ReloadPolicyView[],
  baselineStore?: ReturnType<typeof baselineStoreOn>,
) {
  const server = new InMemoryCluster();
  const secretHashes = new Map([
    [NS, secretHash],
    [NS_B, secretHash],
  ]);
  const secret = (hash: string, namespace = NS) =>
    aSecret(namespace, 'db').withHash(hash).withUid(`secret-uid-${namespace}`).build();
  /** One kreload process on the server: its caches listed from what the server holds now. */
  const start = () => {
    const process = startPipeline(server, {
      sourceTypes: ['SECRET'],
      debounce: { syncDelayMs: SYNC_DELAY_MS, syncMaxDelayMs: 30_000 },
      rollouts: settings,
      reloadPolicies: policies !== undefined,
      baselines: baselineStore?.open(),
    });
    const { watched } = process;
    watched.byType.SECRET?.replace(
      [...secretHashes].map(([namespace, hash]) => secret(hash, namespace)),
    );
    watched.store.replace(
      'Deployment',
      workloads.flatMap((view) => server.api.server(view.ref) ?? []),
    );
    if (policies) watched.policies?.replace([...policies]);
    process.adoptRollouts();
    process.queue.start();
    return process;
  };
  for (const view of workloads) server.api.put(view);
  const first = start();
  const { queue, events, sample } = first;
  const { store } = first.watched;
  let caches = first.watched.byType;
  /**
   * kill -9 and a new process (or a new leader): the old one's memory is gone, the server keeps
   * what was written; the new one lists and reconciles every workload (its start-up resync).
   */
  const restart = () => {
    queue.stop();
    const next = start();
    caches = next.watched.byType;
    for (const view of workloads) next.queue.trigger(workloadKey(view.ref), { debounced: false });
    return next;
  };

  const refOf = (name: string, namespace = NS): WorkloadRef => ({
    kind: 'Deployment',
    namespace,
    name,
  });
  /** The deployment controller: the current generation's rollout is now complete or failed. */
  const settle = (name: string, outcome: 'complete' | 'failed', namespace = NS): void => {
    server.update(refOf(name, namespace), (view) => ({
      ...view,
      rolloutStatus: rolloutStatus(view.generation ?? 1, outcome),
    }));
  };
  /** A user edits the workload's metadata annotations (`null` removes one). */
  const annotate = (name: string, annotations: Record<string, string | null>): void => {
    server.update(refOf(name), (view) => {
      const next: Record<string, string> = { ...view.annotations };
      for (const [key, value] of Object.entries(annotations)) {
        if (value === null) Reflect.deleteProperty(next, key);
        else next[key] = value;
      }
      return { ...view, annotations: next };
    });
  };
  /** Names of the workloads rolled (template PATCHes), in the order sent. */
  const rolled = (): string[] =>
    server.sent.filter(isRoll).map((write) => write.key.split('/')[2] ?? '');
  /** The halt marker PATCHes: workload name and marker. */
  const halts = (): { name: string; marker: Record<string, unknown> }[] =>
    server.sent
      .filter((write) => !isRoll(write))
      .flatMap((write) => {
        const annotations = (write.body.metadata as { annotations?: Record<string, string> })
          .annotations;
        const marker = annotations?.[ROLLOUT_HALTED];
        return marker === undefined
          ? []
          : [
              {
                name: write.key.split('/')[2] ?? '',
                marker: JSON.parse(marker) as Record<string, unknown>,
              },
            ];
      });
  /** Rollouts in flight now, from the server's state: rolled and not complete. */
  const inFlight = (): string[] =>
    workloads.flatMap((w) => {
      const view = server.api.server(w.ref);
      const status = view?.rolloutStatus;
      const generation = view?.generation ?? 1;
      const done =
        status?.model === 'replica-set' &&
        status.observedGeneration === generation &&
        status.updated === status.desired;
      return view && generation > 1 && !done ? [w.ref.name] : [];
    });
  return {
    queue,
    store,
    server,
    events,
    gauge: sample,
    settle,
    annotate,
    rolled,
    halts,
    inFlight,
    restart,
    editSecret: (hash: string, namespace = NS) => {
      secretHashes.set(namespace, hash);
      caches.SECRET?.upsert(secret(hash, namespace));
    },
  };
}

const advance = (ms: number): Promise<void> =>
  vi.advanceTimersByTimeAsync(ms).then(() => undefined);

const NAMES = Array.from({ length: 10 }, (_, i) => `w${String(i)}`);

/**
 * The deployment controller completes every rollout in flight (but `except`'s) each 2 s until
 * `rolls` rolls were sent; the most rollouts in flight at once (rolled, not complete) meanwhile.
 */
async function completeAll(
  c: { rolled(): string[]; inFlight(): string[]; settle(name: string, outcome: 'complete'): void },
  rolls: number,
  except?: string,
): Promise<number> {
  const rolling = () => c.inFlight().filter((name) => name !== except);
  let maxInFlight = 0;
  for (let round = 0; round < 30 && c.rolled().length < rolls; round += 1) {
    maxInFlight = Math.max(maxInFlight, rolling().length);
    for (const name of rolling()) c.settle(name, 'complete');
    await advance(2_000);
  }
  return Math.max(maxInFlight, rolling().length);
}

const TEN = NAMES.map((name) => deployment(name));
const TEN_REF: WorkloadRef = { kind: 'Deployment', namespace: NS, name: 'w0' };

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});

afterEach(() => {
  vi.useRealTimers();
});

/** BAD fails at the canary w0 and halts its change; then FIX is written and its debounce passes. */
async function haltAtCanaryThenFix(c: ReturnType<typeof cluster>): Promise<void> {
  c.editSecret(BAD);
  await advance(SYNC_DELAY_MS + 100);
  c.settle('w0', 'failed');
  await advance(100);
  expect(c.halts()).toHaveLength(1);
  c.editSecret(FIX);
  await advance(SYNC_DELAY_MS + 100);
}

describe('safe rollout: ten Deployments share one Secret, canary 1, budget 3', () => {
  it('only the canary is patched until it is complete; then waves of at most 3', async () => {
    const c = cluster(WAVES, TEN);
    c.editSecret(FIX);
    await advance(SYNC_DELAY_MS + 100);
    expect(c.rolled()).toEqual(['w0']);
    await advance(60_000);
    expect(c.rolled()).toEqual(['w0']);
    c.settle('w0', 'complete');
    await advance(100);
    expect(c.rolled().sort()).toEqual(['w0', 'w1', 'w2', 'w3']);
    const maxInFlight = await completeAll(c, 10);
    expect(c.rolled().sort()).toEqual(NAMES);
    expect(maxInFlight).toBe(3);
    expect(c.halts()).toEqual([]);
    expect(await c.gauge('kreload_rollouts_held_total', { reason: 'wave' })).toBeGreaterThan(0);
  });

  it('a failed canary: 0 further rolls, the halt marker PATCH, Events, metric; resume', async () => {
    const c = cluster(WAVES, TEN);
    c.editSecret(BAD);
    await advance(SYNC_DELAY_MS + 100);
    expect(c.rolled()).toEqual(['w0']);
    c.settle('w0', 'failed');
    await advance(100);
    expect(c.rolled()).toEqual(['w0']);
    expect(c.halts()).toEqual([
      {
        name: 'w0',
        marker: {
          source: `secret/${NS}/db`,
          hash: BAD,
          at: expect.any(String) as string,
          reason: 'ProgressDeadlineExceeded',
        },
      },
    ]);
    const halted = c.events.filter((event) => event.reason === 'ConfigRolloutHalted');
    expect(halted.map((event) => `${event.object.kind}/${event.object.name}`).sort()).toEqual([
      'Deployment/w0',
      'Secret/db',
    ]);
    expect(halted[0]?.type).toBe('Warning');
    expect(halted[0]?.message).toContain(
      'kubectl annotate -n team-a deployment/w0 kreload.io/rollout-halted-',
    );
    expect(await c.gauge('kreload_config_rollouts_halted')).toBe(1);
    await advance(30 * 60_000);
    expect(c.rolled()).toEqual(['w0']);
    expect(c.halts()).toHaveLength(1);

    // Resume: the user removes the marker; the canary's failure is accepted, wave 1 starts.
    c.annotate('w0', { [ROLLOUT_HALTED]: null });
    await advance(100);
    expect(c.rolled().sort()).toEqual(['w0', 'w1', 'w2', 'w3']);
    expect(await c.gauge('kreload_config_rollouts_halted')).toBe(0);
  });

  it('a fix after a halt rolls every workload in waves, never more than 3 in flight', async () => {
    const c = cluster(WAVES, TEN);
    await haltAtCanaryThenFix(c);
    // The new change starts with its own canary: w0 again (first in the order).
    expect(c.rolled()).toEqual(['w0', 'w0']);
    expect(await c.gauge('kreload_config_rollouts_halted')).toBe(0);
    const maxInFlight = await completeAll(c, 11);
    expect(c.rolled().slice(1).sort()).toEqual(NAMES);
    expect(maxInFlight).toBe(3);
  });

  it('rollout-priority: foo is complete before bar starts, whatever their names', async () => {
    const foo = deployment('zz-foo', { [ROLLOUT_PRIORITY]: '-1' });
    const bar = deployment('aa-bar', { [ROLLOUT_PRIORITY]: '5' });
    const c = cluster({ ...WAVES, maxConcurrent: 1 }, [foo, bar, deployment('mid')]);
    c.editSecret(FIX);
    await advance(SYNC_DELAY_MS + 100);
    expect(c.rolled()).toEqual(['zz-foo']);
    c.settle('zz-foo', 'complete');
    await advance(100);
    expect(c.rolled()).toEqual(['zz-foo', 'mid']);
    c.settle('mid', 'complete');
    await advance(100);
    expect(c.rolled()).toEqual(['zz-foo', 'mid', 'aa-bar']);
  });

  it('a 403 on the halt marker: the change stays held, the marker is tried again', async () => {
    const c = cluster(WAVES, TEN);
    c.editSecret(BAD);
    await advance(SYNC_DELAY_MS + 100);
    c.server.failPatchesOf(
      workloadKey(TEN[0]?.ref ?? { kind: 'Deployment', namespace: NS, name: 'w0' }),
      new ApiError('forbidden', { status: 403, retryable: false }),
    );
    c.settle('w0', 'failed');
    await advance(100);
    expect(c.rolled()).toEqual(['w0']);
    expect(c.events.filter((event) => event.reason === 'ConfigRolloutHalted')).toHaveLength(2);
    await advance(5 * 60_000);
    expect(c.rolled()).toEqual(['w0']);
    expect(c.halts().map((halt) => halt.name)).toEqual(['w0', 'w0']);
    expect(c.events.filter((event) => event.reason === 'ConfigRolloutHalted')).toHaveLength(2);
  });

  it('a halt marker PATCH whose answer is lost: retried, the halt kept, nothing rolled', async () => {
    const c = cluster(WAVES, TEN);
    c.editSecret(BAD);
    await advance(SYNC_DELAY_MS + 100);
    // The server applies the marker, the answer is lost, and the watch has not shown it yet.
    c.server.api.loseNextAnswer('patch', new ApiError('socket hang up', { retryable: true }));
    c.settle('w0', 'failed');
    await advance(100);
    await advance(5 * 60_000);
    expect(c.rolled()).toEqual(['w0']);
    const marker = c.server.api.server(TEN[0]?.ref ?? TEN_REF)?.annotations[ROLLOUT_HALTED];
    expect(JSON.parse(marker ?? '{}')).toMatchObject({
      hash: BAD,
      reason: 'ProgressDeadlineExceeded',
    });
    expect(new Set(c.halts().map((halt) => halt.name))).toEqual(new Set(['w0']));
  });

  it("a 403 on one namespace's workloads does not hold another namespace's waves", async () => {
    const others = ['b0', 'b1', 'b2', 'b3'].map((name) => deployment(name, {}, undefined, NS_B));
    const c = cluster(WAVES, [...TEN, ...others]);
    for (const view of TEN) {
      c.server.failPatchesOf(
        workloadKey(view.ref),
        ...Array.from(
          { length: 20 },
          () => new ApiError('forbidden', { status: 403, retryable: false }),
        ),
      );
    }
    c.editSecret(BAD);
    c.editSecret(BAD, NS_B);
    await advance(SYNC_DELAY_MS + 100);
    const rolledIn = (namespace: string): string[] =>
      c.server.sent
        .filter((write) => write.key.split('/')[1] === namespace)
        .filter((write) => write.body.spec !== undefined)
        .map((write) => write.key.split('/')[2] ?? '');
    expect(rolledIn(NS_B)).toEqual(['b0']);
    c.settle('b0', 'complete', NS_B);
    await advance(100);
    expect(rolledIn(NS_B).sort()).toEqual(['b0', 'b1', 'b2', 'b3']);
    // team-a: its canary was refused, once; nothing else there was tried.
    expect(new Set(rolledIn(NS))).toEqual(new Set(['w0']));
  });

  it('without any flag every dependent is patched at once, as Reloader does', async () => {
    const c = cluster(undefined, TEN);
    c.editSecret(BAD);
    await advance(SYNC_DELAY_MS + 1_000);
    expect(c.rolled().sort()).toEqual(NAMES);
  });

  it('two workers, one slot left: one PATCH, the other once the first is complete', async () => {
    const budget = { ...UNLIMITED_ROLLOUTS, maxConcurrent: 1 };
    const c = cluster(budget, [deployment('a'), deployment('b')]);
    c.editSecret(FIX);
    await advance(SYNC_DELAY_MS + 100);
    expect(c.rolled()).toHaveLength(1);
    await advance(60_000);
    expect(c.rolled()).toHaveLength(1);
    c.settle(c.rolled()[0] ?? '', 'complete');
    await advance(100);
    expect(c.rolled().sort()).toEqual(['a', 'b']);
    expect(await c.gauge('kreload_rollouts_held_total', { reason: 'budget' })).toBeGreaterThan(0);
  });

  it('a freed slot asks one waiting roll again, not every waiting roll', async () => {
    // A storm: 40 dependents, budget 1. Each freed slot (the write's end, the rollout's end) asks
    // again only as many waiting rolls as there are free slots, so the decisions grow with the
    // number of rolls, not with its square (about 40 × 40 × 2 when every waiter woke).
    const names = Array.from({ length: 40 }, (_, i) => `s${String(i)}`);
    const c = cluster(
      { ...UNLIMITED_ROLLOUTS, maxConcurrent: 1 },
      names.map((n) => deployment(n)),
    );
    c.editSecret(FIX);
    await advance(SYNC_DELAY_MS + 100);
    for (let settled = 0; settled < names.length; settled += 1) {
      const rolled = c.rolled();
      expect(rolled).toHaveLength(settled + 1);
      c.settle(rolled[settled] ?? '', 'complete');
      await advance(10);
    }
    expect(c.rolled().sort()).toEqual([...names].sort());
    const held = await c.gauge('kreload_rollouts_held_total', { reason: 'budget' });
    expect(held).toBeGreaterThanOrEqual(names.length - 1);
    expect(held).toBeLessThanOrEqual(names.length * 4);
  });

  it('a wave member deleted mid-wave drops out: the next wave starts without it', async () => {
    const c = cluster(WAVES, TEN);
    c.editSecret(FIX);
    await advance(SYNC_DELAY_MS + 100);
    c.settle('w0', 'complete');
    await advance(100);
    expect(c.rolled().sort()).toEqual(['w0', 'w1', 'w2', 'w3']);
    c.store.remove({ kind: 'Deployment', namespace: NS, name: 'w2' });
    c.settle('w1', 'complete');
    c.settle('w3', 'complete');
    await advance(100);
    // Wave 1 is now w1, w3, w4: w4 rolls, then wave 2 once it is complete.
    expect(c.rolled().sort()).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
    c.settle('w4', 'complete');
    await advance(100);
    expect(c.rolled().sort()).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7']);
  });

  it.each([
    {
      title: 'a canary not complete within --rollout-deadline halts the change',
      deadlineMs: 60_000,
      progressDeadlineSeconds: undefined,
      quietUntilMs: 59_000,
    },
    {
      title: "without --rollout-deadline, the canary's own progressDeadlineSeconds + 30 s",
      deadlineMs: undefined,
      progressDeadlineSeconds: 60,
      quietUntilMs: 89_000,
    },
    {
      title: "--rollout-deadline overrides the workload's own progress deadline",
      deadlineMs: 60_000,
      progressDeadlineSeconds: 3_600,
      quietUntilMs: 59_000,
    },
  ])('$title', async ({ deadlineMs, progressDeadlineSeconds, quietUntilMs }) => {
    const canary = deployment('w0');
    const status = canary.rolloutStatus as ReplicaSetStatusView;
    const withDeadline =
      progressDeadlineSeconds === undefined
        ? canary
        : { ...canary, rolloutStatus: { ...status, progressDeadlineSeconds } };
    const c = cluster({ ...WAVES, deadlineMs }, [withDeadline, ...TEN.slice(1)]);
    c.editSecret(BAD);
    await advance(SYNC_DELAY_MS + 100);
    expect(c.rolled()).toEqual(['w0']);
    await advance(quietUntilMs);
    expect(c.halts()).toEqual([]);
    await advance(31_000);
    expect(c.rolled()).toEqual(['w0']);
    expect(c.halts().map((halt) => [halt.name, halt.marker.reason])).toEqual([
      ['w0', 'RolloutDeadlineExceeded'],
    ]);
  });

  it('a new leader resumes at the same wave and rolls no member twice', async () => {
    // The previous leader rolled the canary (complete) and w1 (still progressing), then died.
    const workloads = TEN.map((view, i) => {
      if (i === 0) return deployment('w0', {}, { hash: FIX, outcome: 'complete' });
      if (i === 1) return deployment('w1', {}, { hash: FIX, outcome: 'progressing' });
      return view;
    });
    const c = cluster(WAVES, workloads, FIX);
    await advance(100);
    for (const view of workloads) c.queue.trigger(workloadKey(view.ref), { debounced: false });
    await advance(100);
    // Wave 1 is w1, w2, w3; w1 (adopted) holds one of the 3 slots.
    expect(c.rolled().sort()).toEqual(['w2', 'w3']);
  });

  it('a change resumed before a restart stays resumed: the new process rolls on', async () => {
    // The user removed the failed canary's marker; wave 1 rolled (complete); then kreload died.
    const workloads = TEN.map((view, i) => {
      if (i === 0) return deployment('w0', {}, { hash: BAD, outcome: 'failed' });
      if (i <= 3) return deployment(view.ref.name, {}, { hash: BAD, outcome: 'complete' });
      return view;
    });
    const c = cluster(WAVES, workloads, BAD);
    for (const view of workloads) c.queue.trigger(workloadKey(view.ref), { debounced: false });
    await advance(100);
    // Wave 2 (w4, w5, w6) rolls; the accepted failure of w0 is not halted again.
    expect(c.halts()).toEqual([]);
    expect(c.rolled().sort()).toEqual(['w4', 'w5', 'w6']);
  });

  it('a resume, then kill -9 before the next wave rolls: the new process rolls on', async () => {
    const c = cluster(WAVES, TEN);
    c.editSecret(BAD);
    await advance(SYNC_DELAY_MS + 100);
    c.settle('w0', 'failed');
    await advance(100);
    const halt = c.server.sent.find((write) => !isRoll(write));
    const marker = JSON.stringify(c.halts()[0]?.marker);
    expect(halt && { key: halt.key, annotations: annotationsOf(halt) }).toEqual({
      key: `Deployment/${NS}/w0`,
      annotations: { [ROLLOUT_HALTED]: marker, [ROLLOUT_FAILED]: marker },
    });
    // The user removes the marker; kreload dies before its watch shows it (before wave 1 rolls).
    c.annotate('w0', { [ROLLOUT_HALTED]: null });
    const sentBeforeRestart = c.server.sent.length;
    const next = c.restart();
    await advance(100);
    // Wave 1 rolls; the accepted failure of w0 is not halted again, nothing is written twice.
    const after = () => c.server.sent.slice(sentBeforeRestart);
    expect(after().every(isRoll)).toBe(true);
    expect(after().map((write) => write.key)).toEqual(
      ['w1', 'w2', 'w3'].map((name) => `Deployment/${NS}/${name}`),
    );
    for (let round = 0; round < 10 && c.rolled().length < 10; round += 1) {
      for (const name of c.inFlight()) if (name !== 'w0') c.settle(name, 'complete');
      await advance(2_000);
    }
    expect(after().every(isRoll)).toBe(true);
    // Each rolled once, wave after wave.
    expect(c.rolled().sort()).toEqual(NAMES);
    expect(c.rolled().slice(4, 7).sort()).toEqual(['w4', 'w5', 'w6']);
    expect(next.events.filter((event) => event.reason === 'ConfigRolloutHalted')).toEqual([]);
    expect(await next.sample('kreload_config_rollouts_halted')).toBe(0);
  });

  it("a failed member's next roll drops its failure record: the same content halts again", async () => {
    const c = cluster(WAVES, TEN);
    const settleAll = async () => {
      for (let round = 0; round < 10; round += 1) {
        for (const name of c.inFlight()) if (name !== 'w0') c.settle(name, 'complete');
        await advance(2_000);
      }
    };
    c.editSecret(BAD);
    await advance(SYNC_DELAY_MS + 100);
    c.settle('w0', 'failed');
    await advance(100);
    c.annotate('w0', { [ROLLOUT_HALTED]: null });
    await advance(100);
    await settleAll();
    expect(c.rolled().sort()).toEqual(NAMES);
    // A fix: its canary roll of w0 removes the record of the accepted failure.
    c.editSecret(FIX);
    await advance(SYNC_DELAY_MS + 100);
    const canaryRoll = c.server.sent.at(-1);
    expect(canaryRoll && [canaryRoll.key, isRoll(canaryRoll)]).toEqual([
      `Deployment/${NS}/w0`,
      true,
    ]);
    expect(canaryRoll && annotationsOf(canaryRoll)[ROLLOUT_FAILED]).toBeNull();
    c.settle('w0', 'complete');
    await advance(100);
    await settleAll();
    expect(c.rolled()).toHaveLength(20);
    // The bad content again: a new rollout of it, whose canary failure halts the change again.
    c.editSecret(BAD);
    await advance(SYNC_DELAY_MS + 100);
    expect(c.rolled().slice(20)).toEqual(['w0']);
    c.settle('w0', 'failed');
    await advance(60_000);
    expect(c.rolled().slice(20)).toEqual(['w0']);
    expect(c.halts().map((halt) => [halt.name, halt.marker.hash])).toEqual([
      ['w0', BAD],
      ['w0', BAD],
    ]);
  });

  it('a new leader finds the halt on the failed canary: nothing is rolled', async () => {
    const marker = JSON.stringify({
      source: `secret/${NS}/db`,
      hash: BAD,
      at: '2026-12-06T00:00:00Z',
      reason: 'ProgressDeadlineExceeded',
    });
    const workloads = TEN.map((view, i) =>
      i === 0
        ? deployment('w0', { [ROLLOUT_HALTED]: marker }, { hash: BAD, outcome: 'failed' })
        : view,
    );
    const c = cluster(WAVES, workloads, BAD);
    for (const view of workloads) c.queue.trigger(workloadKey(view.ref), { debounced: false });
    await advance(60_000);
    expect(c.server.sent).toEqual([]);
  });
});

describe('safe rollout from a ReloadPolicy: canary 1, halt, maxConcurrent 2 over six targets', () => {
  // The flags only turn admission on: their canary (3) and halting (off) are the policy's to override.
  const FLAGS: RolloutSettings = {
    ...UNLIMITED_ROLLOUTS,
    waves: true,
    canary: { count: 3 },
    haltOnFailure: false,
  };
  const SIX = NAMES.slice(0, 6);
  /**
   * After a halt, the fix's own canary (w0 again) rolls alone although the flag says 3; once it is
   * complete the other five roll, the policy's budget letting at most 2 in at once.
   */
  const expectFixWithinTwo = async (c: ReturnType<typeof cluster>): Promise<void> => {
    expect(c.rolled()).toEqual(['w0', 'w0']);
    c.settle('w0', 'complete');
    await advance(100);
    expect(c.rolled().slice(2)).toHaveLength(2);
    await advance(60_000);
    expect(c.rolled().slice(2)).toHaveLength(2);
    expect(await completeAll(c, 7)).toBe(2);
    expect(c.rolled().slice(1).sort()).toEqual(SIX);
  };
  /** Six Deployments that reload only because the policy targets them (no annotation). */
  const targets = SIX.map((name) => {
    const view = deployment(name);
    const annotations = Object.fromEntries(
      Object.entries(view.annotations).filter(([key]) => key !== KEYS.auto),
    );
    return { ...view, annotations };
  });
  const POLICY = aPolicy(NS, 'db-readers', {
    sources: [{ kind: 'SECRET', name: 'db' }],
    targets: SIX.map((name) => ({ kind: 'Deployment', name })),
    rolloutCanary: '1',
    rolloutHaltOnFailure: true,
    rolloutMaxConcurrent: 2,
  });
  const policyCluster = () => cluster(FLAGS, targets, OLD, [POLICY]);

  it('a bad value: only the canary rolls, fails, halts; no PATCH to the other five', async () => {
    const c = policyCluster();
    c.editSecret(BAD);
    await advance(SYNC_DELAY_MS + 100);
    expect(c.server.sent.map((write) => [write.key, isRoll(write)])).toEqual([
      [`Deployment/${NS}/w0`, true],
    ]);
    c.settle('w0', 'failed');
    await advance(100);
    expect(c.halts()).toEqual([
      {
        name: 'w0',
        marker: {
          source: `secret/${NS}/db`,
          hash: BAD,
          at: expect.any(String) as string,
          reason: 'ProgressDeadlineExceeded',
        },
      },
    ]);
    await advance(30 * 60_000);
    // Exactly two writes in all: the canary's roll and its halt marker.
    expect(c.server.sent.map((write) => [write.key, isRoll(write)])).toEqual([
      [`Deployment/${NS}/w0`, true],
      [`Deployment/${NS}/w0`, false],
    ]);
    const halted = c.events.filter((event) => event.reason === 'ConfigRolloutHalted');
    expect(halted.map((event) => `${event.object.kind}/${event.object.name}`).sort()).toEqual([
      'Deployment/w0',
      'Secret/db',
    ]);
    expect(halted[0]?.message).toContain('5 workload(s) held');
  });

  it('a fix rolls all six in waves, never more than 2 of them in flight', async () => {
    const c = policyCluster();
    await haltAtCanaryThenFix(c);
    await expectFixWithinTwo(c);
    expect(
      await c.gauge('kreload_rollouts_held_total', { reason: 'policy_budget' }),
    ).toBeGreaterThan(0);
  });

  describe("with the baseline store in kreload's namespace (the default store)", () => {
    /** The same six, never rolled: their baselines are records in the store, not annotations. */
    const unannotated = targets.map((view) => {
      const annotations = Object.fromEntries(
        Object.entries(view.annotations).filter(([key]) => key !== BASELINE),
      );
      return { ...view, annotations };
    });
    const RECORD = `{"secret/db":"${OLD}"}`;
    const storeCluster = async () => {
      const store = baselineStoreOn(() => 5);
      const seed = store.open();
      for (const view of unannotated) seed.record(view, RECORD);
      await seed.flush();
      store.configMaps.writes.length = 0;
      return { c: cluster(FLAGS, unannotated, OLD, [POLICY], store), store };
    };
    /** The store's writes: each record it set or removed, in the order sent. */
    const storeWrites = (store: ReturnType<typeof baselineStoreOn>) =>
      store.configMaps.writes.flatMap((write) =>
        Object.entries((write.body as { data: Record<string, string | null> }).data),
      );
    const keyOf = (name: string): string => {
      const view = unannotated.find((target) => target.ref.name === name);
      if (view === undefined) throw new Error(`no target ${name}`);
      return recordKey(view);
    };

    // Each PATCH below is answered 5 ms before the watch shows it (the watch is that far behind).
    it('a bad value: the canary alone rolls and halts; its record is removed once', async () => {
      const { c, store } = await storeCluster();
      c.editSecret(BAD);
      await advance(SYNC_DELAY_MS + 100);
      expect(c.server.sent.map((write) => [write.key, isRoll(write)])).toEqual([
        [`Deployment/${NS}/w0`, true],
      ]);
      c.settle('w0', 'failed');
      await advance(60_000);
      expect(c.halts().map((halt) => [halt.name, halt.marker.hash])).toEqual([['w0', BAD]]);
      expect(c.server.sent.map((write) => [write.key, isRoll(write)])).toEqual([
        [`Deployment/${NS}/w0`, true],
        [`Deployment/${NS}/w0`, false],
      ]);
      expect(storeWrites(store)).toEqual([[keyOf('w0'), null]]);
      expect(Object.keys(store.records()).sort()).toEqual(SIX.slice(1).map((name) => keyOf(name)));
    });

    it('the fix after a halt rolls all six, never more than 2 in flight', async () => {
      const { c, store } = await storeCluster();
      // The halt as the e2e spec saw it: the watch showed the canary's roll before its answer.
      c.server.answerLagMs = 10;
      c.editSecret(BAD);
      await advance(SYNC_DELAY_MS + 100);
      c.settle('w0', 'failed');
      await advance(60_000);
      expect(c.halts().map((halt) => halt.name)).toEqual(['w0']);
      c.server.answerLagMs = 0;
      c.editSecret(FIX);
      await advance(SYNC_DELAY_MS + 100);
      await expectFixWithinTwo(c);
      // Two writes of the canary (its bad roll, its halt), then one roll each; nothing else.
      expect(c.server.sent.slice(2).every(isRoll)).toBe(true);
      expect(c.server.sent).toHaveLength(8);
      // Each record removed once, after its workload's roll; none is left.
      await advance(REMOVAL_FLUSH_INTERVAL_MS);
      expect(storeWrites(store).sort()).toEqual(SIX.map((name) => [keyOf(name), null]).sort());
      expect(store.records()).toEqual({});
    });

    it('a resume by removing the marker: the next wave within 2, each member rolled once', async () => {
      const { c, store } = await storeCluster();
      c.editSecret(BAD);
      await advance(SYNC_DELAY_MS + 100);
      c.settle('w0', 'failed');
      await advance(60_000);
      c.annotate('w0', { [ROLLOUT_HALTED]: null });
      await advance(100);
      expect(c.rolled().slice(1)).toHaveLength(2);
      await advance(60_000);
      expect(c.rolled().slice(1)).toHaveLength(2);
      const maxInFlight = await completeAll(c, 6, 'w0');
      expect([...c.rolled()].sort()).toEqual(SIX);
      expect(maxInFlight).toBe(2);
      expect(c.server.sent.slice(2).every(isRoll)).toBe(true);
      // Removals alone go out after the store's longer interval.
      await advance(REMOVAL_FLUSH_INTERVAL_MS);
      expect(store.records()).toEqual({});
    });

    it('a roll the watch shows after 60 s keeps its record until a plan sees W hold B', async () => {
      const { c, store } = await storeCluster();
      c.server.watchLagMs = 70_000;
      c.editSecret(FIX);
      await advance(SYNC_DELAY_MS + 61_000);
      expect(c.rolled()).toEqual(['w0']);
      expect(storeWrites(store)).toEqual([]);
      // The roll's echo is kreload's own: it reconciles nothing. The next pass of w0 retires it.
      await advance(10_000);
      expect(storeWrites(store)).toEqual([]);
      c.queue.trigger(workloadKey({ kind: 'Deployment', namespace: NS, name: 'w0' }), {
        debounced: false,
      });
      await advance(REMOVAL_FLUSH_INTERVAL_MS + 100);
      expect(storeWrites(store)).toEqual([[keyOf('w0'), null]]);
      expect(c.rolled()).toEqual(['w0']);
    });

    it('kill -9 while halted, then the fix: the new process keeps within 2', async () => {
      const { c, store } = await storeCluster();
      c.editSecret(BAD);
      await advance(SYNC_DELAY_MS + 100);
      c.settle('w0', 'failed');
      await advance(60_000);
      const sentWhileHalted = c.server.sent.length;
      c.restart();
      await advance(60_000);
      // The new process finds the halt in the cluster: nothing written, no record touched.
      expect(c.server.sent).toHaveLength(sentWhileHalted);
      expect(storeWrites(store)).toEqual([[keyOf('w0'), null]]);
      c.editSecret(FIX);
      await advance(SYNC_DELAY_MS + 100);
      expect(c.rolled()).toEqual(['w0', 'w0']);
      c.settle('w0', 'complete');
      await advance(100);
      expect(c.rolled().slice(2)).toHaveLength(2);
      expect(await completeAll(c, 7)).toBe(2);
      expect(c.rolled().slice(1).sort()).toEqual(SIX);
      expect(c.server.sent.slice(sentWhileHalted).every(isRoll)).toBe(true);
      // Removals alone go out after the store's longer interval.
      await advance(REMOVAL_FLUSH_INTERVAL_MS);
      expect(store.records()).toEqual({});
    });

    it('kill -9 after two rolls of the fix, before their records go: no third, no roll twice', async () => {
      const { c, store } = await storeCluster();
      await haltAtCanaryThenFix(c);
      c.settle('w0', 'complete');
      await advance(100);
      const wave = c.rolled().slice(2);
      expect(wave).toHaveLength(2);
      // The store has not flushed their removals (removals wait): lost with the process.
      const waveKeys = wave.map((name) => keyOf(name));
      expect(storeWrites(store).filter(([key]) => waveKeys.includes(key))).toEqual([]);
      c.restart();
      await advance(100);
      expect(c.rolled().slice(2)).toEqual(wave);
      expect(await completeAll(c, 7)).toBe(2);
      expect(c.rolled().slice(1).sort()).toEqual(SIX);
      // The new process retires the records the rolls left, from W's `{}`: none is left.
      // Removals alone go out after the store's longer interval.
      await advance(REMOVAL_FLUSH_INTERVAL_MS);
      expect(store.records()).toEqual({});
    });

    it('a second change mid-resume: the policy budget spans both, each rolls once per change', async () => {
      const FIX2 = '4'.repeat(40);
      const { c, store } = await storeCluster();
      await haltAtCanaryThenFix(c);
      c.settle('w0', 'complete');
      await advance(100);
      const wave = c.rolled().slice(2);
      expect(wave).toHaveLength(2);
      c.editSecret(FIX2);
      await advance(SYNC_DELAY_MS + 100);
      // Both rollouts of the fix are in flight: the new change's canary waits for a slot.
      expect(c.rolled().slice(2)).toEqual(wave);
      expect(await completeAll(c, 4 + SIX.length)).toBe(2);
      const afterFix = c.rolled().slice(4);
      expect(afterFix[0]).toBe('w0');
      expect([...afterFix].sort()).toEqual(SIX);
      expect(c.server.sent.slice(2).every(isRoll)).toBe(true);
      // Removals alone go out after the store's longer interval.
      await advance(REMOVAL_FLUSH_INTERVAL_MS);
      expect(store.records()).toEqual({});
    });
  });
});
