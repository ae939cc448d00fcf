import { describe, expect, it } from 'vitest';
import { FAKE_NODE } from '../cluster/fake-nodes.ts';
import { envFrom, workloadManifest, type WorkloadSpec } from './workloads.ts';

const base: WorkloadSpec = {
  kind: 'Deployment',
  namespace: 'ns',
  name: 'app',
  uses: [envFrom('configmap', 'shared')],
  replicas: 3,
};

function podSpecOf(spec: WorkloadSpec): Record<string, unknown> {
  const manifest = workloadManifest(spec, {}) as {
    spec: { template: { spec: Record<string, unknown> } };
  };
  return manifest.spec.template.spec;
}

describe('workloadManifest scheduling', () => {
  it.each([
    {
      name: 'by default: a scheduler that does not run, so pods stay Pending',
      spec: base,
      scheduling: { schedulerName: 'kreload-bench-unscheduled' },
      absent: ['nodeSelector', 'tolerations'],
    },
    {
      name: 'runnable: the default scheduler onto the kwok nodes',
      spec: { ...base, runnable: true },
      scheduling: {
        nodeSelector: { [FAKE_NODE.label.key]: FAKE_NODE.label.value },
        tolerations: [
          { key: FAKE_NODE.taint.key, operator: 'Exists', effect: FAKE_NODE.taint.effect },
        ],
      },
      absent: ['schedulerName'],
    },
  ])('$name', ({ spec, scheduling, absent }) => {
    const pod = podSpecOf(spec);
    expect(pod).toMatchObject(scheduling);
    for (const field of absent) expect(pod).not.toHaveProperty(field);
    expect(pod.containers).toEqual([
      expect.objectContaining({ name: 'app', envFrom: [{ configMapRef: { name: 'shared' } }] }),
    ]);
  });
});
