import { describe, expect, it } from 'vitest';
import { BUILT_IN_KIND_TABLE } from '../../rollout/kinds.ts';
import type { JsonObject } from '../../core/json.ts';
import { CONFIG_REVISIONS, ROLLOUT_HALTED, SNAPSHOTS } from '../../core/types.ts';
import { formatHaltMarker } from '../../rollout/waves.ts';
import type { RevisionKind } from '../../rollout/kinds.ts';
import { aWorkload } from '../../testing/builders.ts';
import { FailedRolloutUndo } from './undo.ts';

const UID = 'uid-web';
const MARK = { 'kreload.io/rollout-halted': '{"source":"configmap/shop/cfg"}' };

function replicaSet(revision: number, snapshots: string | undefined): JsonObject {
  return {
    metadata: {
      name: `web-${String(revision)}`,
      annotations: { 'deployment.kubernetes.io/revision': String(revision) },
      ownerReferences: [{ uid: UID, controller: true }],
    },
    spec: {
      template: {
        metadata: snapshots === undefined ? {} : { annotations: { [SNAPSHOTS]: snapshots } },
        spec: { containers: [{ name: 'app', image: `v${String(revision)}` }] },
      },
    },
  };
}

const LIVE: JsonObject = {
  metadata: {
    uid: UID,
    resourceVersion: '7',
    annotations: { 'deployment.kubernetes.io/revision': '3' },
  },
};

function undo(options: {
  readonly items: readonly JsonObject[];
  readonly object?: JsonObject | undefined;
  readonly configRevisions?: boolean;
}) {
  const listed: RevisionKind[] = [];
  const subject = new FailedRolloutUndo({
    kinds: BUILT_IN_KIND_TABLE,
    writer: { getObject: () => Promise.resolve(options.object) },
    revisions: {
      revisions: (kind) => {
        listed.push(kind);
        return Promise.resolve(options.items);
      },
    },
    configRevisions: options.configRevisions ?? true,
  });
  return { subject, listed };
}

const OPTED_IN = aWorkload('Deployment', 'shop', 'web')
  .withUid(UID)
  .withAnnotation(CONFIG_REVISIONS, 'true')
  .build();

const PINNED_2 = '{"configmap/cfg":"cfg-2222222222"}';

describe('FailedRolloutUndo', () => {
  it('undoes to the revision below the live one when it pins the changed source', async () => {
    const { subject, listed } = undo({
      items: [
        replicaSet(1, undefined),
        replicaSet(2, PINNED_2),
        replicaSet(3, '{"configmap/cfg":"cfg-3333333333"}'),
      ],
      object: LIVE,
    });
    const answer = await subject.plan(OPTED_IN, 'configmap/cfg', MARK);
    expect(listed).toEqual(['ReplicaSet']);
    expect(answer).toEqual({
      patch: {
        type: 'strategic',
        body: {
          metadata: { resourceVersion: '7', annotations: MARK },
          spec: {
            template: {
              metadata: { annotations: { [SNAPSHOTS]: PINNED_2 } },
              spec: { containers: [{ name: 'app', image: 'v2' }] },
              $patch: 'replace',
            },
          },
        },
      },
      revision: { object: 'web-2', number: 2 },
      snapshots: ['cfg-2222222222'],
    });
  });

  it.each([
    {
      name: 'the revision below references the live source',
      items: [replicaSet(2, undefined), replicaSet(3, PINNED_2)],
      object: LIVE,
      view: OPTED_IN,
      why: 'revision 2 runs the live configmap/cfg, not a snapshot of it',
    },
    {
      name: 'not opted in to config revisions',
      items: [replicaSet(2, PINNED_2), replicaSet(3, PINNED_2)],
      object: LIVE,
      view: aWorkload('Deployment', 'shop', 'web').withUid(UID).build(),
      why: 'not opted in to config revisions',
    },
    {
      name: 'the workload is gone',
      items: [],
      object: undefined,
      view: OPTED_IN,
      why: 'gone',
    },
    {
      name: 'the live revision is the first one',
      items: [replicaSet(3, PINNED_2)],
      object: LIVE,
      view: OPTED_IN,
      why: 'revision 3 is the first one kept',
    },
  ])('not undone: $name', async ({ items, object, view, why }) => {
    const { subject } = undo({ items, object });
    expect(await subject.plan(view, 'configmap/cfg', MARK)).toEqual({ notUndone: why });
  });

  it('an undo whose answer was lost is not undone again when the halt is retried', async () => {
    // The earlier PATCH went through: the workload carries this change's marker and revision 2's
    // template, which the Deployment controller renumbered 4. The revision below is the failed 3.
    const marker = (at: string) => ({
      [ROLLOUT_HALTED]: formatHaltMarker({
        source: 'configmap/shop/cfg',
        hash: 'h3',
        at,
        reason: 'ProgressDeadlineExceeded',
      }),
    });
    const undone: JsonObject = {
      metadata: {
        uid: UID,
        resourceVersion: '9',
        annotations: {
          'deployment.kubernetes.io/revision': '4',
          ...marker('2026-12-06T10:00:00Z'),
        },
      },
    };
    const { subject } = undo({
      items: [
        replicaSet(1, undefined),
        replicaSet(3, '{"configmap/cfg":"cfg-3333333333"}'),
        replicaSet(4, PINNED_2),
      ],
      object: undone,
    });
    const answer = await subject.plan(OPTED_IN, 'configmap/cfg', marker('2026-12-06T10:00:05Z'));
    expect(answer).toEqual({ halted: true });
  });

  it('with config revisions off nothing is read', async () => {
    const { subject, listed } = undo({ items: [], object: LIVE, configRevisions: false });
    expect(await subject.plan(OPTED_IN, 'configmap/cfg', MARK)).toEqual({
      notUndone: 'not opted in to config revisions',
    });
    expect(listed).toEqual([]);
  });
});
