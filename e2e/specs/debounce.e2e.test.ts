// Spec §8: with a debounce window, changes that reach one workload inside it make one roll that
// carries every new hash, and a burst of edits makes one roll with the last content.
import { describe, expect, it } from 'vitest';
import { AUTO, baselineAfterRoll } from '../harness/annotations.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import {
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
  type SecretSpec,
} from '../harness/sources.ts';
import {
  APP,
  SIDECAR,
  WORKLOAD_KINDS,
  podSpec,
  viewOfSpec,
  type WorkloadRef,
} from '../harness/workloads.ts';

// Long enough that two API calls a few milliseconds apart always land in one window on a busy
// 2-core machine; short enough to keep the file quick.
const SYNC_DELAY = '3s';

const fixture = useKreload({
  name: 'debounce',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, `--sync-delay=${SYNC_DELAY}`],
});

describe(`debounce window (--sync-delay=${SYNC_DELAY})`, () => {
  it('a ConfigMap and a Secret changed inside the window roll each workload once', async () => {
    const { namespace, kreload, workloads, sources, events } = fixture;
    const cases = WORKLOAD_KINDS.map((row) => {
      const name = `${row.short}-pair`;
      const config: ConfigMapSpec = { type: 'CONFIGMAP', name: `${name}-cfg`, data: { v: '1' } };
      const credentials: SecretSpec = { type: 'SECRET', name: `${name}-sec`, data: { p: 'one' } };
      const spec = {
        namespace,
        name,
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({
          app: { envFrom: [{ configMapRef: { name: config.name } }] },
          sidecar: { envFrom: [{ secretRef: { name: credentials.name } }] },
        }),
      };
      return { row, spec, config, credentials };
    });
    const refs = new Map<string, WorkloadRef>();
    for (const c of cases) {
      await sources.create(namespace, c.config);
      await sources.create(namespace, c.credentials);
      refs.set(c.spec.name, await workloads.create(c.row.kind, c.spec));
    }
    const baselined = await Promise.all(
      cases.map((c) =>
        waitForBaseline(workloads, refs.get(c.spec.name)!, {
          [sourceKey(c.config)]: sourceHash(c.config),
          [sourceKey(c.credentials)]: sourceHash(c.credentials),
        }),
      ),
    );

    const before = await scrapeMetrics(kreload);
    const changed = cases.map((c) => ({
      ...c,
      config: { ...c.config, data: { v: '2' } },
      credentials: { ...c.credentials, data: { p: 'two' } },
    }));
    for (const c of changed) {
      await sources.replace(namespace, c.config);
      await sources.replace(namespace, c.credentials);
    }
    await Promise.all(
      changed.map((c) =>
        waitForEnv(workloads, refs.get(c.spec.name)!, {
          container: SIDECAR,
          name: envVarName(c.credentials),
          value: sourceHash(c.credentials),
        }),
      ),
    );
    const settled = await waitUntilSettled(kreload, {
      since: before,
      events: [
        { resource: 'configmaps', event: 'update', atLeast: cases.length },
        { resource: 'secrets', event: 'update', atLeast: cases.length },
      ],
    });

    for (const [index, c] of changed.entries()) {
      const ref = refs.get(c.spec.name)!;
      const after = await workloads.read(ref);
      const created = viewOfSpec(c.spec);
      expect(after.containers, c.row.kind).toEqual([
        { name: APP, env: { [envVarName(c.config)]: sourceHash(c.config) } },
        { name: SIDECAR, env: { [envVarName(c.credentials)]: sourceHash(c.credentials) } },
      ]);
      // The roll moves B out of the store and into W, as the `{}` that says W owns it.
      expect(after.annotations, c.row.kind).toEqual({
        ...created.annotations,
        ...baselineAfterRoll({}, true),
      });
      expect(after.generation, c.row.kind).toBe((baselined[index]?.generation ?? 0) + 1);
      expect((await workloads.settledRevisions(ref, 2)).revisions, c.row.kind).toBe(2);
      const messages = (await events.about({ ...ref })).map((e) => e.message);
      expect(
        messages.filter((m) => m.includes(c.config.name) && m.includes(c.credentials.name)),
        `one Reloaded Event naming both sources on ${c.row.kind}`,
      ).toHaveLength(1);
    }
    expect(settled.delta(before, 'reloader_reload_executed_total', { success: 'true' })).toBe(
      cases.length,
    );
    expect(settled.delta(before, 'reloader_debounce_coalesced_total')).toBeGreaterThanOrEqual(
      cases.length,
    );
  });

  it('a burst of ten edits rolls each workload once, to the last content', async () => {
    const { namespace, kreload, workloads, sources } = fixture;
    const initial: ConfigMapSpec = { type: 'CONFIGMAP', name: 'burst-cfg', data: { n: '0' } };
    await sources.create(namespace, initial);
    const refs = await Promise.all(
      WORKLOAD_KINDS.map((row) =>
        workloads.create(row.kind, {
          namespace,
          name: `${row.short}-burst`,
          annotations: { [AUTO]: 'true' },
          podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: initial.name } }] } }),
        }),
      ),
    );
    const baselined = await Promise.all(
      refs.map((ref) =>
        waitForBaseline(workloads, ref, { [sourceKey(initial)]: sourceHash(initial) }),
      ),
    );

    const before = await scrapeMetrics(kreload);
    let last = initial;
    for (let n = 1; n <= 10; n += 1) {
      last = { ...initial, data: { n: String(n) } };
      await sources.replace(namespace, last);
    }
    const final = last;
    await Promise.all(
      refs.map((ref) =>
        waitForEnv(workloads, ref, {
          container: APP,
          name: envVarName(final),
          value: sourceHash(final),
        }),
      ),
    );
    const settled = await waitUntilSettled(kreload, {
      since: before,
      events: [{ resource: 'configmaps', event: 'update', atLeast: 10 }],
    });

    for (const [index, ref] of refs.entries()) {
      const after = await workloads.read(ref);
      expect(after.generation, ref.kind).toBe((baselined[index]?.generation ?? 0) + 1);
      expect((await workloads.settledRevisions(ref, 2)).revisions, ref.kind).toBe(2);
    }
    expect(settled.delta(before, 'reloader_reload_executed_total', { success: 'true' })).toBe(
      refs.length,
    );
    // Ten triggers per workload, nine of them folded into the pending one.
    expect(settled.delta(before, 'reloader_debounce_coalesced_total')).toBeGreaterThanOrEqual(
      9 * refs.length,
    );
  });
});
