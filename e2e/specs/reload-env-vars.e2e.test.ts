// The scenario table (reload-rules.table.ts) over every workload kind with the default strategy
// (env-vars, spec §6.1), plus the flows that need more than one change: a GitOps tool reverting
// kreload's env var (§5.6 item 6) and a Deployment left paused with an unparsable paused-at (§7.2).
import { describe, expect, it } from 'vitest';
import { AUTO, BASELINE, PAUSE_PERIOD, PAUSED_AT, stateJson } from '../harness/annotations.ts';
import { waitForBaseline, waitForEnv, waitForView } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, WORKLOAD_KINDS, podSpec, viewOfSpec } from '../harness/workloads.ts';
import { defineReloadRuleTable } from './reload-rules.suite.ts';

const fixture = useKreload({
  name: 'reload-env-vars',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
});

defineReloadRuleTable(fixture, 'env-vars');

describe('GitOps revert (§5.6 item 6, §14)', () => {
  it.each(WORKLOAD_KINDS)(
    '$kind: stripping the env var records a baseline instead of writing it back',
    async (row) => {
      const { namespace, kreload, workloads, sources } = fixture;
      const name = `${row.short}-gitops`;
      const initial: ConfigMapSpec = { type: 'CONFIGMAP', name: `${name}-cfg`, data: { v: '1' } };
      const changed: ConfigMapSpec = { ...initial, data: { v: '2' } };
      const key = sourceKey(initial);
      const variable = envVarName(initial);
      const spec = {
        namespace,
        name,
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: initial.name } }] } }),
      };
      await sources.create(namespace, initial);
      const ref = await workloads.create(row.kind, spec);
      await waitForBaseline(workloads, ref, { [key]: sourceHash(initial) });

      const beforeChange = await scrapeMetrics(kreload);
      await sources.replace(namespace, changed);
      const rolled = await waitForEnv(workloads, ref, {
        container: APP,
        name: variable,
        value: sourceHash(changed),
      });
      // The API server shows the roll before kreload has its answer and counts it: wait for that.
      const beforeRevert = await waitUntilSettled(kreload, {
        since: beforeChange,
        events: [{ resource: 'configmaps', event: 'update', atLeast: 1 }],
      });
      await workloads.patch(ref, {
        spec: {
          template: {
            spec: { containers: [{ name: APP, env: [{ name: variable, $patch: 'delete' }] }] },
          },
        },
      });
      await waitForBaseline(workloads, ref, { [key]: sourceHash(changed) });
      const settled = await waitUntilSettled(kreload, {
        since: beforeRevert,
        events: [{ resource: row.resource, event: 'update', atLeast: 1 }],
      });

      const after = await workloads.read(ref);
      expect(after.containers).toEqual(viewOfSpec(spec).containers);
      expect(after.annotations).toEqual({
        [AUTO]: 'true',
        [BASELINE]: stateJson({ [key]: sourceHash(changed) }),
      });
      // The revert, plus the baseline patch where annotations count (Deployment): no write-back.
      expect(after.generation).toBe(
        rolled.generation + 1 + (row.annotationChangeBumpsGeneration ? 1 : 0),
      );
      expect(settled.delta(beforeRevert, 'reloader_reload_executed_total')).toBe(0);
    },
  );
});

describe('pause period (§7.2, §14)', () => {
  it('Deployment: an unparsable paused-at is resumed at once', async () => {
    const { namespace, workloads, sources } = fixture;
    const source: ConfigMapSpec = { type: 'CONFIGMAP', name: 'dep-paused-cfg', data: { v: '1' } };
    await sources.create(namespace, source);
    const ref = await workloads.create('Deployment', {
      namespace,
      name: 'dep-paused',
      paused: true,
      annotations: { [AUTO]: 'true', [PAUSE_PERIOD]: '1m', [PAUSED_AT]: 'yesterday noon' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: source.name } }] } }),
    });

    await waitForView(workloads, ref, (view) => !view.paused, 'resumed');
    // Its baseline is in the store: the resume is the only write to W.
    const resumed = await waitForBaseline(workloads, ref, {
      [sourceKey(source)]: sourceHash(source),
    });

    expect(resumed.annotations).toEqual({ [AUTO]: 'true', [PAUSE_PERIOD]: '1m' });
    expect(resumed.templateAnnotations).toEqual({});
    expect(resumed.containers.map((c) => c.env)).toEqual([{}, {}]);
  });
});
