// Rollouts that really happen: kube-scheduler places the pods on kwok's fake nodes and kwok makes
// them Running and Ready (or crash-loop, for a config declared bad). A good change rolls each kind
// to complete with every pod replaced; a bad one leaves the new ReplicaSet unavailable until the
// Deployment's progress deadline passes.
import { describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import { askController, type ExplainJson } from '../harness/explain.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { PodLifecycle, crashOnConfig, runnable } from '../harness/pod-lifecycle.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import {
  APP,
  podSpec,
  type WorkloadKindName,
  type WorkloadRef,
  type WorkloadSpec,
} from '../harness/workloads.ts';

const fixture = useKreload({
  name: 'rollout-health',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--enable-debug-explain'],
});

const REPLICAS: Readonly<Record<WorkloadKindName, number | undefined>> = {
  Deployment: 3,
  StatefulSet: 2,
  DaemonSet: undefined, // one per fake node
};

function workloadUsing(
  namespace: string,
  kind: WorkloadKindName,
  config: ConfigMapSpec,
  extra: Partial<WorkloadSpec> = {},
): WorkloadSpec {
  const replicas = REPLICAS[kind];
  return {
    namespace,
    name: `${kind.toLowerCase()}-${config.name}`,
    annotations: { [AUTO]: 'true' },
    podSpec: runnable(podSpec({ app: { envFrom: [{ configMapRef: { name: config.name } }] } })),
    ...(replicas === undefined ? {} : { replicas }),
    ...extra,
  };
}

type Rollout = NonNullable<NonNullable<ExplainJson['workload']>['facts']['rollout']>;

/** Waits until /debug/explain shows the rollout kreload started on `ref` ended. */
function rolloutEnded(ref: WorkloadRef, timeoutMs = 30_000): Promise<Rollout> {
  return pollUntil(
    async () => {
      const reply = await askController(fixture.kreload, {
        kind: ref.kind.toLowerCase(),
        namespace: ref.namespace,
        name: ref.name,
      });
      const rollout = (JSON.parse(reply.body) as ExplainJson).workload?.facts.rollout;
      if (rollout?.of === 'kreload' && rollout.result !== undefined) return rollout;
      throw new Error(`last seen: ${reply.body.slice(0, 2000)}`);
    },
    {
      timeoutMs,
      intervalMs: 250,
      describe: `kreload to report the rollout of ${ref.name}`,
    },
  );
}

/**
 * Creates a Deployment on ConfigMap `name` whose pods crash on a bad value (pod-lifecycle.ts's
 * recipe), waits for its first rollout to complete, then writes the bad value and waits until
 * kreload has rolled it in: the new pods crash-loop from then on.
 */
async function rollIntoBadConfig(
  name: string,
  progressDeadlineSeconds: number,
): Promise<{ readonly ref: WorkloadRef; readonly pods: PodLifecycle }> {
  const { namespace, workloads, sources, cluster } = fixture;
  const pods = new PodLifecycle({ kc: cluster.kc });
  const config: ConfigMapSpec = { type: 'CONFIGMAP', name, data: { level: 'info' } };
  const bad: ConfigMapSpec = { ...config, data: { level: 'no-such-level' } };
  await sources.create(namespace, config);
  const ref = await workloads.create(
    'Deployment',
    workloadUsing(namespace, 'Deployment', config, {
      progressDeadlineSeconds,
      templateAnnotations: crashOnConfig(sourceHash(bad)),
    }),
  );
  await waitForBaseline(workloads, ref, { [sourceKey(config)]: sourceHash(config) });
  await pods.waitComplete(ref);
  await sources.replace(namespace, bad);
  await waitForEnv(workloads, ref, {
    container: APP,
    name: envVarName(bad),
    value: sourceHash(bad),
  });
  return { ref, pods };
}

/** The RolloutFailed Events about `ref`, once there is one. */
function rolloutFailedEvents(ref: WorkloadRef) {
  return pollUntil(
    async () => {
      const found = (await fixture.events.about(ref)).filter(
        (event) => event.reason === 'RolloutFailed',
      );
      if (found.length > 0) return found;
      throw new Error('no RolloutFailed Event yet');
    },
    { timeoutMs: 20_000, describe: 'the RolloutFailed Event' },
  );
}

describe('rollouts on kwok nodes', () => {
  it('a good change rolls a Deployment, a StatefulSet and a DaemonSet to complete', async () => {
    const { namespace, workloads, sources, cluster } = fixture;
    const pods = new PodLifecycle({ kc: cluster.kc });
    const config: ConfigMapSpec = { type: 'CONFIGMAP', name: 'good', data: { level: 'info' } };
    await sources.create(namespace, config);
    const refs: WorkloadRef[] = [];
    for (const kind of ['Deployment', 'StatefulSet', 'DaemonSet'] as const) {
      refs.push(await workloads.create(kind, workloadUsing(namespace, kind, config)));
    }
    for (const ref of refs) {
      await waitForBaseline(workloads, ref, { [sourceKey(config)]: sourceHash(config) });
      await pods.waitComplete(ref);
    }
    const before = new Map<WorkloadRef, readonly string[]>();
    for (const ref of refs)
      before.set(
        ref,
        (await pods.pods(ref)).map((p) => p.uid),
      );

    const changed: ConfigMapSpec = { ...config, data: { level: 'debug' } };
    await sources.replace(namespace, changed);
    const expected = { container: APP, name: envVarName(changed), value: sourceHash(changed) };
    for (const ref of refs) {
      await waitForEnv(workloads, ref, expected);
      const status = await pods.waitComplete(ref);
      const now = await pods.pods(ref);
      expect(
        now.map((p) => ({ ready: p.ready, phase: p.phase })),
        ref.kind,
      ).toEqual(now.map(() => ({ ready: true, phase: 'Running' })));
      expect(now).toHaveLength(status.desired);
      // Every pod is new (a StatefulSet keeps the names, not the pods) and carries the new hash.
      expect(
        now.filter((p) => before.get(ref)?.includes(p.uid)),
        ref.kind,
      ).toEqual([]);
      expect(await pods.podEnv(ref, APP, expected.name), ref.kind).toEqual(
        now.map(() => expected.value),
      );
      expect(await rolloutEnded(ref), ref.kind).toMatchObject({
        of: 'kreload',
        state: 'complete',
        result: 'complete',
      });
    }
    const metrics = await scrapeMetrics(fixture.kreload);
    expect(metrics.value('kreload_rollouts_in_progress')).toBe(0);
    for (const ref of refs) {
      expect(
        metrics.value('kreload_rollout_duration_seconds_count', {
          kind: ref.kind,
          result: 'complete',
        }),
        ref.kind,
      ).toBe(1);
    }
  });

  it('a bad change leaves the new pods crash-looping until the progress deadline passes', async () => {
    const { ref, pods } = await rollIntoBadConfig('bad', 5);
    const status = await pods.waitProgressDeadlineExceeded(ref);
    // The old ReplicaSet keeps serving: maxUnavailable 25 % of 3 rounds down to 0.
    expect(status).toMatchObject({ desired: 3, available: 3, updated: 1 });
    const crashing = (await pods.pods(ref)).filter((p) => !p.ready);
    expect(crashing.map((p) => p.containerState)).toEqual(['CrashLoopBackOff']);

    expect(await rolloutEnded(ref)).toMatchObject({
      of: 'kreload',
      state: 'failed',
      reason: 'ProgressDeadlineExceeded',
      result: 'failed',
    });
    const metrics = await scrapeMetrics(fixture.kreload);
    expect(
      metrics.value('kreload_rollout_duration_seconds_count', {
        kind: 'Deployment',
        result: 'failed',
      }),
    ).toBe(1);
    const failed = await rolloutFailedEvents(ref);
    expect(failed).toMatchObject([
      {
        type: 'Warning',
        message: expect.stringContaining('failed: ProgressDeadlineExceeded') as unknown,
      },
    ]);
  });

  it('kill -9 mid-rollout: the restarted kreload follows it again and reports its failure', async () => {
    // Long enough for kreload to die and come back before the deadline passes.
    const { ref } = await rollIntoBadConfig('crash', 20);
    await fixture.kill9();
    await fixture.start();

    // Nothing but the cluster told the new process about the rollout: no write, no file.
    const inProgress = await pollUntil(
      async () => {
        const value = (await scrapeMetrics(fixture.kreload)).value('kreload_rollouts_in_progress');
        if (value === 1) return value;
        throw new Error(`kreload_rollouts_in_progress is ${String(value)}`);
      },
      { timeoutMs: 15_000, describe: 'the restarted kreload to count the rollout in progress' },
    );
    expect(inProgress).toBe(1);
    expect(await rolloutEnded(ref, 60_000)).toMatchObject({
      of: 'kreload',
      adopted: true,
      state: 'failed',
      reason: 'ProgressDeadlineExceeded',
      result: 'failed',
    });
    const metrics = await scrapeMetrics(fixture.kreload);
    expect(metrics.value('kreload_rollouts_in_progress')).toBe(0);
    expect(
      metrics.value('kreload_rollout_duration_seconds_count', {
        kind: 'Deployment',
        result: 'failed',
      }),
    ).toBe(1);
    const failed = await rolloutFailedEvents(ref);
    expect(failed).toMatchObject([{ type: 'Warning' }]);
  });
});
