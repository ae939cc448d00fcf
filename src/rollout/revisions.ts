/**
 * A workload's revisions (ReplicaSets or ControllerRevisions) as `kubectl rollout history` and
 * `rollout undo` read them: their numbers, their pod templates, which one runs now, and the patch
 * that puts an earlier one back. Pure: callers list the revisions and write the patch.
 */
import type { JsonObject } from '../core/json.ts';
import { numberAt, objectAt, objectsAt, stringAt } from '../core/json.ts';
import type { RevisionKind, WorkloadKindRow } from './kinds.ts';

export const DEPLOYMENT_REVISION = 'deployment.kubernetes.io/revision';

/** The label the Deployment controller adds to a ReplicaSet's template; never part of an undo. */
const POD_TEMPLATE_HASH = 'pod-template-hash';

/** Where a revision keeps its number and its pod template, per revision kind. */
const REVISION_FIELDS: Readonly<
  Record<
    RevisionKind,
    { readonly number: (o: JsonObject) => number | undefined; readonly template: readonly string[] }
  >
> = {
  ReplicaSet: {
    number: (o) => {
      const raw = stringAt(o, ['metadata', 'annotations', DEPLOYMENT_REVISION]);
      return raw === undefined || !/^\d+$/.test(raw) ? undefined : Number(raw);
    },
    template: ['spec', 'template'],
  },
  ControllerRevision: {
    number: (o) => numberAt(o, ['revision']),
    template: ['data', 'spec', 'template'],
  },
};

/** One revision object of a workload. */
export interface OwnedRevision {
  readonly object: string;
  readonly revision: number;
  readonly createdAt: string | undefined;
  /** The pod template as the revision stores it; undefined when it has none. */
  readonly template: JsonObject | undefined;
}

function controlledBy(object: JsonObject, uid: string): boolean {
  return objectsAt(object, ['metadata', 'ownerReferences']).some(
    (owner) => owner.uid === uid && owner.controller === true,
  );
}

/** The revisions in `list` (a LIST answer) that the workload with `uid` controls and numbers. */
export function ownedRevisions(
  list: JsonObject,
  kind: RevisionKind,
  uid: string,
): readonly OwnedRevision[] {
  const fields = REVISION_FIELDS[kind];
  return objectsAt(list, ['items'])
    .filter((item) => controlledBy(item, uid))
    .flatMap((item) => {
      const revision = fields.number(item);
      if (revision === undefined) return [];
      return [
        {
          object: stringAt(item, ['metadata', 'name']) ?? '',
          revision,
          createdAt: stringAt(item, ['metadata', 'creationTimestamp']),
          template: objectAt(item, fields.template),
        },
      ];
    });
}

/** The revision that runs now, by the rule of the workload's kind row; undefined when none. */
export function liveRevision<R extends Pick<OwnedRevision, 'object' | 'revision'>>(
  row: Pick<WorkloadKindRow, 'liveRevision'>,
  workload: JsonObject,
  revisions: readonly R[],
): R | undefined {
  const newest = [...revisions].sort((a, b) => b.revision - a.revision)[0];
  switch (row.liveRevision) {
    case 'revision-annotation': {
      const raw = stringAt(workload, ['metadata', 'annotations', DEPLOYMENT_REVISION]);
      return revisions.find((r) => String(r.revision) === raw) ?? newest;
    }
    case 'update-revision': {
      const name = stringAt(workload, ['status', 'updateRevision']);
      return revisions.find((r) => r.object === name) ?? newest;
    }
    case 'newest':
      return newest;
  }
}

/** What an undo would do: the patch back to the revision before the live one, or why not. */
export type UndoPlan =
  | {
      readonly state: 'ready';
      readonly from: OwnedRevision;
      readonly to: OwnedRevision;
      /** A strategic merge patch replacing the pod template, with the resourceVersion guard. */
      readonly patch: JsonObject;
    }
  | { readonly state: 'impossible'; readonly why: string };

/**
 * The undo of the live revision, as `kubectl rollout undo` without `--to-revision`: the pod
 * template of the highest revision below the live one replaces the workload's, in one patch that
 * also carries `annotations` (kreload's record of why) and the workload's resourceVersion.
 */
export function planUndo(
  row: Pick<WorkloadKindRow, 'kind' | 'liveRevision' | 'revisionKind'>,
  workload: JsonObject,
  list: JsonObject,
  annotations: Readonly<Record<string, string>>,
): UndoPlan {
  const { kind, revisionKind } = row;
  if (revisionKind === undefined) {
    return { state: 'impossible', why: `a ${kind} keeps no revision history` };
  }
  const uid = stringAt(workload, ['metadata', 'uid']) ?? '';
  const revisions = ownedRevisions(list, revisionKind, uid);
  const from = liveRevision(row, workload, revisions);
  if (from === undefined) return { state: 'impossible', why: `no ${revisionKind} found` };
  const to = [...revisions]
    .filter((r) => r.revision < from.revision)
    .sort((a, b) => b.revision - a.revision)[0];
  if (to === undefined) {
    return { state: 'impossible', why: `revision ${String(from.revision)} is the first one kept` };
  }
  if (to.template === undefined) {
    return { state: 'impossible', why: `${to.object} stores no pod template` };
  }
  const template = withoutPodTemplateHash(to.template);
  const patch: JsonObject = {
    metadata: {
      resourceVersion: stringAt(workload, ['metadata', 'resourceVersion']) ?? '',
      annotations: { ...annotations },
    },
    spec: { template: { ...template, $patch: 'replace' } },
  };
  return { state: 'ready', from, to, patch };
}

function withoutPodTemplateHash(template: JsonObject): JsonObject {
  const labels = objectAt(template, ['metadata', 'labels']);
  if (labels?.[POD_TEMPLATE_HASH] === undefined) return template;
  const kept = Object.fromEntries(
    Object.entries(labels).filter(([name]) => name !== POD_TEMPLATE_HASH),
  );
  const metadata = objectAt(template, ['metadata']) ?? {};
  return { ...template, metadata: { ...metadata, labels: kept } };
}
