// `--baseline-store=workload` (docs/adr/0046), the mode for clusters where kreload must not own
// ConfigMaps in its namespace: the first-sight baseline is the workload's own annotation, the store
// gets no record, and a change rolls the workload once.
import { describe, expect, it } from 'vitest';
import { AUTO, BASELINE, stateJson } from '../harness/annotations.ts';
import { waitForEnv, waitForView } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, podSpec } from '../harness/workloads.ts';

const fixture = useKreload({
  name: 'bstore-workload',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    '--baseline-store=workload',
  ],
});

const config = (value: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'w-config',
  data: { value },
});

describe('--baseline-store=workload', () => {
  it('writes the first-sight baseline on the workload, none in the store; a change rolls', async () => {
    const { namespace, workloads, sources } = fixture;
    await sources.create(namespace, config('1'));
    const ref = await workloads.create('Deployment', {
      namespace,
      name: 'w-dep',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: config('1').name } }] } }),
    });
    const baselined = await waitForView(
      workloads,
      ref,
      (view) => view.annotations[BASELINE] !== undefined,
      'a baseline in W',
    );
    expect(baselined.annotations[BASELINE]).toBe(
      stateJson({ [sourceKey(config('1'))]: sourceHash(config('1')) }),
    );
    expect(await workloads.baselines.recordsOf(namespace)).toEqual(new Map());
    await workloads.settledRevisions(ref, 1);
    await sources.replace(namespace, config('2'));
    await waitForEnv(workloads, ref, {
      container: APP,
      name: envVarName(config('2')),
      value: sourceHash(config('2')),
    });
    expect(await workloads.baselines.recordsOf(namespace)).toEqual(new Map());
  });
});
