import { describe, expect, it } from 'vitest';
import { kindRow } from './kinds.ts';
import type { JsonObject } from '../core/json.ts';
import type { WorkloadKind } from '../core/types.ts';
import { planUndo } from './revisions.ts';

const UID = 'w-uid';
const HALT = { 'kreload.io/rollout-halted': '{"source":"secret/ns/app"}' };

function template(version: string): JsonObject {
  return {
    metadata: { labels: { app: 'web', 'pod-template-hash': `h${version}` } },
    spec: { containers: [{ name: 'app', image: `img:${version}` }] },
  };
}

function replicaSet(name: string, revision: number, owner = UID): JsonObject {
  return {
    metadata: {
      name,
      annotations: { 'deployment.kubernetes.io/revision': String(revision) },
      ownerReferences: [{ uid: owner, controller: true }],
    },
    spec: { template: template(String(revision)) },
  };
}

function controllerRevision(name: string, revision: number): JsonObject {
  return {
    metadata: { name, ownerReferences: [{ uid: UID, controller: true }] },
    revision,
    data: { spec: { template: { ...template(String(revision)), $patch: 'replace' } } },
  };
}

function workload(annotations: Record<string, string>, status: JsonObject = {}): JsonObject {
  return { metadata: { uid: UID, resourceVersion: '42', annotations }, status };
}

const live = (revision: number) => ({ 'deployment.kubernetes.io/revision': String(revision) });

const CASES: readonly {
  readonly name: string;
  readonly kind: WorkloadKind;
  readonly workload: JsonObject;
  readonly items: readonly JsonObject[];
  readonly to?: string;
  readonly image?: string;
  readonly why?: RegExp;
}[] = [
  {
    name: 'a Deployment goes back to the revision below the live one',
    kind: 'Deployment',
    workload: workload(live(3)),
    items: [replicaSet('rs1', 1), replicaSet('rs3', 3), replicaSet('rs2', 2)],
    to: 'rs2',
    image: 'img:2',
  },
  {
    name: 'the live revision is the annotated one, not the newest',
    kind: 'Deployment',
    workload: workload(live(2)),
    items: [replicaSet('rs1', 1), replicaSet('rs3', 3), replicaSet('rs2', 2)],
    to: 'rs1',
    image: 'img:1',
  },
  {
    name: "another workload's ReplicaSets are not its history",
    kind: 'Deployment',
    workload: workload(live(3)),
    items: [replicaSet('rs3', 3), replicaSet('other2', 2, 'other-uid')],
    why: /revision 3 is the first one kept/,
  },
  {
    name: 'a StatefulSet goes back from its update revision',
    kind: 'StatefulSet',
    workload: workload({}, { updateRevision: 'cr5' }),
    items: [controllerRevision('cr4', 4), controllerRevision('cr5', 5)],
    to: 'cr4',
    image: 'img:4',
  },
  {
    name: 'a DaemonSet goes back from its newest revision',
    kind: 'DaemonSet',
    workload: workload({}),
    items: [
      controllerRevision('cr1', 1),
      controllerRevision('cr7', 7),
      controllerRevision('cr6', 6),
    ],
    to: 'cr6',
    image: 'img:6',
  },
  {
    name: 'no revision at all',
    kind: 'Deployment',
    workload: workload(live(1)),
    items: [],
    why: /no ReplicaSet found/,
  },
  {
    name: 'a kind without revisions',
    kind: 'CronJob',
    workload: workload({}),
    items: [],
    why: /keeps no revision history/,
  },
];

describe('planUndo', () => {
  it.each(CASES)('$name', ({ kind, workload: object, items, to, image, why }) => {
    const plan = planUndo(kindRow(kind), object, { items: [...items] }, HALT);
    if (why) {
      expect(plan).toMatchObject({
        state: 'impossible',
        why: expect.stringMatching(why) as unknown,
      });
      return;
    }
    expect(plan.state).toBe('ready');
    if (plan.state !== 'ready') return;
    expect(plan.to.object).toBe(to);
    expect(plan.patch).toEqual({
      metadata: { resourceVersion: '42', annotations: HALT },
      spec: {
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image }] },
          $patch: 'replace',
        },
      },
    });
  });
});
