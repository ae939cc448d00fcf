import { probe } from './probes.ts';

/**
 * The fake nodes kwok plays the kubelet of. They are tainted, so only a pod that tolerates the taint
 * (and selects them) is ever scheduled: the specs written for a cluster where no pod runs keep
 * seeing Pending pods, Jobs that never complete and DaemonSets with nothing to schedule.
 * e2e/harness/pod-lifecycle.ts makes a pod template runnable.
 */
export const FAKE_NODE = {
  count: 3,
  namePrefix: 'kwok-node-',
  /** kwok manages the nodes carrying this annotation (`--manage-nodes-with-annotation-selector`). */
  annotation: { key: 'kwok.x-k8s.io/node', value: 'fake' },
  /** What a runnable pod's nodeSelector names. */
  label: { key: 'type', value: 'kwok' },
  taint: { key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' },
} as const;

export const FAKE_NODE_NAMES: readonly string[] = Array.from(
  { length: FAKE_NODE.count },
  (_, index) => `${FAKE_NODE.namePrefix}${String(index)}`,
);

export function fakeNodeManifest(name: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [FAKE_NODE.annotation.key]: FAKE_NODE.annotation.value },
      labels: {
        [FAKE_NODE.label.key]: FAKE_NODE.label.value,
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
    },
    spec: { taints: [FAKE_NODE.taint] },
  };
}

interface ApiAccess {
  readonly server: string;
  readonly caPem: string;
  readonly token: string;
}

interface NodeStatus {
  readonly metadata?: { readonly name?: string };
  readonly spec?: { readonly taints?: readonly { readonly key?: string }[] };
  readonly status?: {
    readonly conditions?: readonly { readonly type?: string; readonly status?: string }[];
  };
}

/**
 * One pass of "the fake nodes are there and Ready": creates the missing ones (an AlreadyExists
 * from a concurrent pass is fine), lifts the `not-ready` taint the API server puts on a new node
 * once kwok reports it Ready (the node lifecycle controller's job, not run here: it would mark the
 * fake nodes NotReady whenever a heartbeat comes late on a busy machine), and says whether all are
 * Ready and untainted but for the fake nodes' own taint. Safe to call again after a restart of
 * kwok or of the whole run.
 */
export async function ensureFakeNodesReady(api: ApiAccess): Promise<boolean> {
  const access = { ca: api.caPem, bearerToken: api.token };
  const list = await probe({
    url: `${api.server}/api/v1/nodes?labelSelector=${FAKE_NODE.label.key}%3D${FAKE_NODE.label.value}`,
    ...access,
  });
  if (list.status !== 200) return false;
  const items = (JSON.parse(list.body) as { items?: readonly NodeStatus[] }).items ?? [];
  const present = new Map(items.map((node) => [node.metadata?.name, node]));
  const missing = FAKE_NODE_NAMES.filter((name) => !present.has(name));
  for (const name of missing) {
    const created = await probe({
      url: `${api.server}/api/v1/nodes`,
      json: fakeNodeManifest(name),
      ...access,
    });
    if (created.status !== 201 && created.status !== 409) {
      throw new Error(`creating node ${name}: HTTP ${String(created.status)} ${created.body}`);
    }
  }
  let settled = missing.length === 0;
  for (const node of items) {
    const ready = (node.status?.conditions ?? []).some(
      (c) => c.type === 'Ready' && c.status === 'True',
    );
    const onlyOwnTaint = (node.spec?.taints ?? []).every((t) => t.key === FAKE_NODE.taint.key);
    if (ready && !onlyOwnTaint) {
      const patched = await probe({
        url: `${api.server}/api/v1/nodes/${node.metadata?.name ?? ''}`,
        json: { spec: { taints: [FAKE_NODE.taint] } },
        mergePatch: true,
        ...access,
      });
      if (patched.status !== 200) {
        throw new Error(
          `untainting node ${node.metadata?.name ?? ''}: HTTP ${String(patched.status)}`,
        );
      }
    }
    settled &&= ready && onlyOwnTaint;
  }
  return settled;
}
