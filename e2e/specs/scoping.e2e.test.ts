// Spec §11 in global mode, with every filter at once: --namespace-selector (only labelled
// namespaces are acted in; entering and leaving the set), --namespaces-to-ignore (excluded even
// when labelled), --resource-label-selector (unlabelled ConfigMaps are invisible) and
// --resources-to-ignore=secrets (Secrets are not tracked at all).
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUTO, BASELINE, baselineAfterRoll } from '../harness/annotations.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import {
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
  type SecretSpec,
  type SourceSpec,
} from '../harness/sources.ts';
import {
  APP,
  WORKLOAD_KINDS,
  podSpec,
  type WorkloadRef,
  type WorkloadView,
} from '../harness/workloads.ts';

const SCOPE_LABEL = 'e2e.kreload.io/scope';
const WATCHED_LABEL = 'e2e.kreload.io/watched';

const fixture = useKreload({
  name: 'scoping',
  namespaces: 3,
  // The selector's value is the selected namespace's own name: unique to this run.
  args: ([selected, , ignored]) => [
    `--namespace-selector=${SCOPE_LABEL}=${String(selected)}`,
    `--namespaces-to-ignore=${String(ignored)}`,
    `--resource-label-selector=${WATCHED_LABEL}=true`,
    '--resources-to-ignore=secrets',
    '--sync-delay=0',
  ],
  startInBeforeAll: false,
});

const watched = (data: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'watched-cfg',
  labels: { [WATCHED_LABEL]: 'true' },
  data: { v: data },
});
const unlabelled = (data: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'unlabelled-cfg',
  data: { v: data },
});
/** Tracked in the unselected namespace and not changed before it enters the selection. */
const entry = (data: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'entry-cfg',
  labels: { [WATCHED_LABEL]: 'true' },
  data: { v: data },
});
const credentials = (data: string): SecretSpec => ({
  type: 'SECRET',
  name: 'watched-sec',
  labels: { [WATCHED_LABEL]: 'true' },
  data: { v: data },
});

const strategicMerge = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

function setScopeLabel(namespace: string, value: string | null): Promise<unknown> {
  const core = fixture.cluster.kc.makeApiClient(CoreV1Api);
  return core.patchNamespace(
    { name: namespace, body: { metadata: { labels: { [SCOPE_LABEL]: value } } } },
    strategicMerge,
  );
}

/** One workload per kind and source: `<short>-<source name>`. */
function refsFor(namespace: string, source: SourceSpec): WorkloadRef[] {
  return WORKLOAD_KINDS.map((kind) => ({
    kind: kind.kind,
    namespace,
    name: `${kind.short}-${source.name}`,
  }));
}

async function createTracking(namespace: string, source: SourceSpec): Promise<void> {
  const reference =
    source.type === 'CONFIGMAP'
      ? { envFrom: [{ configMapRef: { name: source.name } }] }
      : { envFrom: [{ secretRef: { name: source.name } }] };
  await fixture.sources.create(namespace, source);
  for (const ref of refsFor(namespace, source)) {
    await fixture.workloads.create(ref.kind, {
      namespace,
      name: ref.name,
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: reference }),
    });
  }
}

async function readAll(refs: readonly WorkloadRef[]): Promise<Map<string, WorkloadView>> {
  const views = new Map<string, WorkloadView>();
  for (const ref of refs)
    views.set(`${ref.namespace}/${ref.name}`, await fixture.workloads.read(ref));
  return views;
}

describe('namespace and resource filters (global mode)', () => {
  let selected: string;
  let unselected: string;
  let ignored: string;
  let untouched: WorkloadRef[];
  let snapshot: Map<string, WorkloadView>;

  beforeAll(async () => {
    [selected = '', unselected = '', ignored = ''] = fixture.namespaces;
    await setScopeLabel(selected, selected);
    await setScopeLabel(ignored, selected);
    await fixture.start();
    await createTracking(selected, watched('1'));
    await createTracking(selected, unlabelled('1'));
    await createTracking(selected, credentials('1'));
    await createTracking(unselected, watched('1'));
    await createTracking(unselected, entry('1'));
    await createTracking(ignored, watched('1'));
    untouched = [
      ...refsFor(selected, unlabelled('1')),
      ...refsFor(selected, credentials('1')),
      ...refsFor(unselected, watched('1')),
      ...refsFor(unselected, entry('1')),
      ...refsFor(ignored, watched('1')),
    ];
  }, 120_000);

  it('acts only on labelled ConfigMaps in selected, not ignored namespaces', async () => {
    const { kreload, workloads, sources } = fixture;
    for (const ref of refsFor(selected, watched('1'))) {
      await waitForBaseline(workloads, ref, {
        [sourceKey(watched('1'))]: sourceHash(watched('1')),
      });
    }
    await waitUntilSettled(kreload, { since: await scrapeMetrics(kreload) });
    snapshot = await readAll(untouched);

    const before = await scrapeMetrics(kreload);
    for (const namespace of [selected, unselected, ignored]) {
      await sources.replace(namespace, watched('2'));
    }
    await sources.replace(selected, unlabelled('2'));
    await sources.replace(selected, credentials('2'));
    for (const ref of refsFor(selected, watched('2'))) {
      await waitForEnv(workloads, ref, {
        container: APP,
        name: envVarName(watched('2')),
        value: sourceHash(watched('2')),
      });
    }
    const settled = await waitUntilSettled(kreload, {
      since: before,
      // selected and unselected; the ignored namespace is filtered out by the API server.
      events: [{ resource: 'configmaps', event: 'update', atLeast: 2 }],
    });

    const after = await readAll(untouched);
    for (const ref of untouched) {
      const key = `${ref.namespace}/${ref.name}`;
      expect(after.get(key)?.generation, key).toBe(snapshot.get(key)?.generation);
      expect(after.get(key)?.annotations[BASELINE], key).toBeUndefined();
      expect(after.get(key)?.containers, key).toEqual(snapshot.get(key)?.containers);
    }
    expect(
      settled.delta(before, 'reloader_skipped_total', { reason: 'ignored_or_not_selected' }),
    ).toBeGreaterThanOrEqual(1);
    expect(settled.delta(before, 'reloader_reload_executed_total', { success: 'true' })).toBe(
      WORKLOAD_KINDS.length,
    );
    const received = (resource: string) =>
      settled.delta(before, 'reloader_events_received_total', { resource_type: resource });
    expect(received('secrets'), 'Secrets are not watched').toBe(0);
  });

  // Sources that did not change while the namespace was unselected: whether a change made in
  // that time rolls on entry (R7, as kreload does) or is absorbed into a baseline is not settled
  // by the spec, so the workloads of watched-cfg are not asserted here.
  it('a namespace entering the selection gets baselines first, and rolls on the next change', async () => {
    const { kreload, workloads, sources } = fixture;
    const refs = refsFor(unselected, entry('1'));
    const before = await scrapeMetrics(kreload);
    await setScopeLabel(unselected, selected);
    const baselined = [];
    for (const ref of refs) {
      baselined.push(
        await waitForBaseline(workloads, ref, { [sourceKey(entry('1'))]: sourceHash(entry('1')) }),
      );
    }
    await waitUntilSettled(kreload, {
      since: before,
      events: [{ resource: 'namespaces', atLeast: 1 }],
    });
    for (const [index, ref] of refs.entries()) {
      const view = await workloads.read(ref);
      expect(
        view.containers.map((c) => c.env),
        ref.kind,
      ).toEqual([{}, {}]);
      expect(view.generation, ref.kind).toBe(baselined[index]?.generation);
    }

    await sources.replace(unselected, entry('2'));
    for (const [index, ref] of refs.entries()) {
      const rolled = await waitForEnv(workloads, ref, {
        container: APP,
        name: envVarName(entry('2')),
        value: sourceHash(entry('2')),
      });
      expect(rolled.generation, ref.kind).toBe((baselined[index]?.generation ?? 0) + 1);
      // The roll moved B (now empty) from the baseline store into W.
      expect(rolled.annotations).toEqual({ [AUTO]: 'true', ...baselineAfterRoll({}, true) });
    }
  });

  it('a namespace leaving the selection receives no further writes', async () => {
    const { kreload, workloads, sources } = fixture;
    const refs = refsFor(selected, watched('2'));
    const left = await scrapeMetrics(kreload);
    await setScopeLabel(selected, null);
    await waitUntilSettled(kreload, {
      since: left,
      events: [{ resource: 'namespaces', atLeast: 1 }],
    });
    const frozen = await readAll(refs);

    const before = await scrapeMetrics(kreload);
    await sources.replace(selected, watched('4'));
    // A change in a selected namespace after it, as the barrier: once that one rolled, the
    // edit in the deselected namespace has been received and dropped.
    await sources.replace(unselected, entry('3'));
    for (const ref of refsFor(unselected, entry('3'))) {
      await waitForEnv(workloads, ref, {
        container: APP,
        name: envVarName(entry('3')),
        value: sourceHash(entry('3')),
      });
    }
    await waitUntilSettled(kreload, {
      since: before,
      events: [{ resource: 'configmaps', event: 'update', atLeast: 2 }],
    });

    const after = await readAll(refs);
    for (const ref of refs) {
      const key = `${ref.namespace}/${ref.name}`;
      expect(after.get(key)?.generation, key).toBe(frozen.get(key)?.generation);
      expect(after.get(key)?.containers, key).toEqual(frozen.get(key)?.containers);
      expect(after.get(key)?.annotations, key).toEqual(frozen.get(key)?.annotations);
    }
  });
});
