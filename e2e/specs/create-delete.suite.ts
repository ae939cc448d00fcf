// Spec §5.5 with --reload-on-create=true and --reload-on-delete=true, for one strategy: a created
// source rolls a workload that lists it (R8); a deleted tracked source rolls to MARKER (R6, D14);
// recreating it rolls again. The flags-off outcomes are rows of the rule table. The file also runs
// with --resources-to-ignore=secrets: create and delete still work for ConfigMaps (D28).
import { describe, expect, it } from 'vitest';
import {
  AUTO,
  BASELINE,
  CONFIGMAP_RELOAD,
  LAST_RELOADED_FROM,
  SOURCE_HASHES,
  baselineAfterRoll,
  stateJson,
} from '../harness/annotations.ts';
import { parseLastReloadedFrom, waitForBaseline, waitForView } from '../harness/expectations.ts';
import type { KreloadFixture } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import {
  DELETE_MARKER_HASH,
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
} from '../harness/sources.ts';
import {
  APP,
  WORKLOAD_KINDS,
  podSpec,
  type WorkloadRef,
  type WorkloadView,
} from '../harness/workloads.ts';
import type { Strategy } from './reload-rules.table.ts';

/** The pod-template state a roll for `source` at `hash` leaves (§6.1, §6.2). */
function rolledFor(
  strategy: Strategy,
  view: WorkloadView,
  expected: { source: ConfigMapSpec; hash: string; namespace: string },
): boolean {
  if (strategy === 'env-vars') {
    return view.containers[0]?.env[envVarName(expected.source)] === expected.hash;
  }
  const hashes = view.templateAnnotations[SOURCE_HASHES];
  return hashes === stateJson({ [sourceKey(expected.source)]: expected.hash });
}

function expectRolledTo(
  strategy: Strategy,
  view: WorkloadView,
  expected: { source: ConfigMapSpec; hash: string; namespace: string; sinceSeconds: number },
): void {
  if (strategy === 'env-vars') {
    expect(view.containers.map((c) => c.env)).toEqual([
      { [envVarName(expected.source)]: expected.hash },
      {},
    ]);
    expect(view.templateAnnotations).toEqual({});
    return;
  }
  expect(view.containers.map((c) => c.env)).toEqual([{}, {}]);
  expect(view.templateAnnotations[SOURCE_HASHES]).toBe(
    stateJson({ [sourceKey(expected.source)]: expected.hash }),
  );
  const observedAt = parseLastReloadedFrom(view.templateAnnotations[LAST_RELOADED_FROM], {
    type: 'CONFIGMAP',
    name: expected.source.name,
    namespace: expected.namespace,
    hash: expected.hash,
    container: APP,
  });
  expect(observedAt, view.templateAnnotations[LAST_RELOADED_FROM]).toBeGreaterThanOrEqual(
    expected.sinceSeconds - 1,
  );
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

export function defineCreateDeleteSuite(fixture: KreloadFixture, strategy: Strategy): void {
  describe(`create and delete flags on (${strategy})`, () => {
    it.each(WORKLOAD_KINDS)(
      '$kind: creating a listed source rolls (R8) into the first regular container',
      async (row) => {
        const { namespace, workloads, sources } = fixture;
        const source: ConfigMapSpec = {
          type: 'CONFIGMAP',
          name: `${row.short}-new-cfg`,
          data: { v: 'created' },
        };
        const beforeWorkload = await scrapeMetrics(fixture.kreload);
        const ref: WorkloadRef = await workloads.create(row.kind, {
          namespace,
          name: `${row.short}-created`,
          annotations: { [CONFIGMAP_RELOAD]: source.name },
          podSpec: podSpec({}),
        });
        // The create mark goes to the workloads indexed when the source appears (§5.4).
        await waitUntilSettled(fixture.kreload, {
          since: beforeWorkload,
          events: [{ resource: row.resource, event: ['add', 'update'], atLeast: 1 }],
        });
        // The first revision must come from the original template (a roll that overtakes a busy
        // kube-controller-manager would leave one revision fewer).
        await workloads.settledRevisions(ref, 1);
        const before = await workloads.read(ref);
        const since = nowSeconds();
        await sources.create(namespace, source);
        const expected = { source, hash: sourceHash(source), namespace, sinceSeconds: since };
        const after = await waitForView(
          workloads,
          ref,
          (view) => rolledFor(strategy, view, expected),
          `rolled for ${source.name}`,
        );
        expectRolledTo(strategy, after, expected);
        expect(after.annotations).toEqual({ [CONFIGMAP_RELOAD]: source.name });
        expect(after.generation).toBe(before.generation + 1);
        expect((await workloads.settledRevisions(ref, 2)).revisions).toBe(2);
      },
    );

    it.each(WORKLOAD_KINDS)(
      '$kind: deleting a tracked source rolls to MARKER once; recreating it rolls again',
      async (row) => {
        const { namespace, workloads, sources } = fixture;
        const source: ConfigMapSpec = {
          type: 'CONFIGMAP',
          name: `${row.short}-del-cfg`,
          data: { v: 'original' },
        };
        const recreated: ConfigMapSpec = { ...source, data: { v: 'recreated' } };
        await sources.create(namespace, source);
        const ref = await workloads.create(row.kind, {
          namespace,
          name: `${row.short}-deleted`,
          annotations: { [AUTO]: 'true' },
          podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: source.name } }] } }),
        });
        const baselined = await waitForBaseline(workloads, ref, {
          [sourceKey(source)]: sourceHash(source),
        });

        const deletedAt = nowSeconds();
        await sources.delete(namespace, source);
        const marker = { source, hash: DELETE_MARKER_HASH, namespace, sinceSeconds: deletedAt };
        const deleted = await waitForView(
          workloads,
          ref,
          (view) => rolledFor(strategy, view, marker),
          'rolled to MARKER',
        );
        expectRolledTo(strategy, deleted, marker);
        // The roll moved B (now empty) from the baseline store into W.
        expect(deleted.annotations[BASELINE]).toBe(baselineAfterRoll({}, true)[BASELINE]);
        expect(deleted.generation).toBe(baselined.generation + 1);

        const recreatedAt = nowSeconds();
        await sources.create(namespace, recreated);
        const back = {
          source: recreated,
          hash: sourceHash(recreated),
          namespace,
          sinceSeconds: recreatedAt,
        };
        const after = await waitForView(
          workloads,
          ref,
          (view) => rolledFor(strategy, view, back),
          'rolled to the recreated content',
        );
        expectRolledTo(strategy, after, back);
        // W owns B since the first roll (`{}`, the store held its record): the second keeps it,
        // so a record whose removal is not sent yet can never come back as B.
        expect(after.annotations).toEqual({ [AUTO]: 'true', ...baselineAfterRoll({}, true) });
        expect(after.generation).toBe(baselined.generation + 2);
        expect((await workloads.settledRevisions(ref, 3)).revisions).toBe(3);
      },
    );
  });
}
