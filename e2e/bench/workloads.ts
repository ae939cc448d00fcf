/** Workload manifests for the scenarios: which containers reference which sources, and how. */
import { fakeNodeScheduling } from '../harness/pod-lifecycle.ts';
import { envVarName } from '../../src/core/env-name.ts';
import { localSourceKey, type SourceType, type WorkloadKind, workloadKey } from './resources.ts';

export type ReferenceVia = 'envFrom' | 'valueFrom' | 'volume' | 'projected';
export type ContainerRole = 'init' | 'app' | 'sidecar';

export interface SourceUse {
  readonly type: SourceType;
  readonly name: string;
  readonly via: ReferenceVia;
  readonly container: ContainerRole;
}

export interface WorkloadSpec {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
  readonly uses: readonly SourceUse[];
  /** Added to `reloader.stakater.com/auto: "true"` on the workload's metadata. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** Env vars the `app` container carries from the start (K3: Reloader-style STAKATER_* values). */
  readonly presetEnv?: Readonly<Record<string, string>>;
  readonly replicas?: number;
  /**
   * Its pods are scheduled on the kwok nodes and become Ready, so rollouts really progress. By
   * default they name a scheduler that does not run and stay Pending.
   */
  readonly runnable?: boolean;
}

// Never pulled: unless a workload is `runnable`, the bench's pods name a scheduler that does not
// run, so they stay Pending and kube-scheduler spends no request on them (the figures stay
// comparable with runs before it). kwok plays the kubelet of runnable ones: nothing is pulled.
const IMAGE = 'registry.invalid/pause:3.10';
const NO_SCHEDULER = 'kreload-bench-unscheduled';
export const AUTO_ANNOTATION = 'reloader.stakater.com/auto';
export const PAUSE_PERIOD_ANNOTATION = 'deployment.reloader.stakater.com/pause-period';

/** Shorthand for the common case: the `app` container references the source with envFrom. */
export function envFrom(type: SourceType, name: string): SourceUse {
  return { type, name, via: 'envFrom', container: 'app' };
}

export function keyOfWorkload(spec: WorkloadSpec): string {
  return workloadKey(spec.kind, spec.namespace, spec.name);
}

/** Env var name → `configmap/name` for every referenced source (spec §4.3). */
export function envNamesOf(spec: WorkloadSpec): Map<string, string> {
  const names = new Map<string, string>();
  for (const use of spec.uses) {
    names.set(
      envVarName(use.type === 'secret' ? 'SECRET' : 'CONFIGMAP', use.name),
      localSourceKey(use.type, use.name),
    );
  }
  return names;
}

interface ContainerParts {
  env: Record<string, unknown>[];
  envFrom: Record<string, unknown>[];
  volumeMounts: Record<string, unknown>[];
  projected: Record<string, unknown>[];
}

function sourceRefFor(use: SourceUse): Record<string, unknown> {
  return use.type === 'secret'
    ? { secretRef: { name: use.name } }
    : { configMapRef: { name: use.name } };
}

function keyRefFor(use: SourceUse): Record<string, unknown> {
  const ref = { name: use.name, key: 'value' };
  return use.type === 'secret' ? { secretKeyRef: ref } : { configMapKeyRef: ref };
}

function volumeSourceFor(use: SourceUse): Record<string, unknown> {
  return use.type === 'secret'
    ? { secret: { secretName: use.name } }
    : { configMap: { name: use.name } };
}

function projectionFor(use: SourceUse): Record<string, unknown> {
  return use.type === 'secret' ? { secret: { name: use.name } } : { configMap: { name: use.name } };
}

function addUse(details: {
  parts: ContainerParts;
  use: SourceUse;
  index: number;
  volumes: Record<string, unknown>[];
}): void {
  const { parts, use, index, volumes } = details;
  switch (use.via) {
    case 'envFrom':
      parts.envFrom.push(sourceRefFor(use));
      return;
    case 'valueFrom':
      parts.env.push({ name: `BENCH_VALUE_${index}`, valueFrom: keyRefFor(use) });
      return;
    case 'volume':
      volumes.push({ name: `v${index}`, ...volumeSourceFor(use) });
      parts.volumeMounts.push({ name: `v${index}`, mountPath: `/etc/bench/v${index}` });
      return;
    case 'projected':
      parts.projected.push(projectionFor(use));
      return;
  }
}

function containerOf(role: ContainerRole, parts: ContainerParts): Record<string, unknown> {
  return {
    name: role,
    image: IMAGE,
    ...(parts.env.length > 0 ? { env: parts.env } : {}),
    ...(parts.envFrom.length > 0 ? { envFrom: parts.envFrom } : {}),
    ...(parts.volumeMounts.length > 0 ? { volumeMounts: parts.volumeMounts } : {}),
  };
}

function podSpec(spec: WorkloadSpec): Record<string, unknown> {
  const roles: ContainerRole[] = ['init', 'app', 'sidecar'];
  const parts = new Map<ContainerRole, ContainerParts>(
    roles.map((role) => [role, { env: [], envFrom: [], volumeMounts: [], projected: [] }]),
  );
  const volumes: Record<string, unknown>[] = [];
  spec.uses.forEach((use, index) => {
    const target = parts.get(use.container);
    if (target !== undefined) addUse({ parts: target, use, index, volumes });
  });
  const app = parts.get('app');
  for (const [name, value] of Object.entries(spec.presetEnv ?? {})) app?.env.push({ name, value });
  for (const [role, part] of parts) {
    if (part.projected.length === 0) continue;
    volumes.push({ name: `p-${role}`, projected: { sources: part.projected } });
    part.volumeMounts.push({ name: `p-${role}`, mountPath: `/etc/bench/p-${role}` });
  }
  const used = (role: ContainerRole): boolean => spec.uses.some((use) => use.container === role);
  const init = parts.get('init');
  const sidecar = parts.get('sidecar');
  const pod = {
    ...(used('init') && init ? { initContainers: [containerOf('init', init)] } : {}),
    containers: [
      ...(app ? [containerOf('app', app)] : []),
      ...(used('sidecar') && sidecar ? [containerOf('sidecar', sidecar)] : []),
    ],
    ...(volumes.length > 0 ? { volumes } : {}),
    terminationGracePeriodSeconds: 0,
  };
  return spec.runnable === true
    ? { ...pod, ...fakeNodeScheduling() }
    : { ...pod, schedulerName: NO_SCHEDULER };
}

const SPEC_BY_KIND: Readonly<
  Record<WorkloadKind, (spec: WorkloadSpec) => Record<string, unknown>>
> = {
  Deployment: (spec) => ({ replicas: spec.replicas ?? 1 }),
  StatefulSet: (spec) => ({ replicas: spec.replicas ?? 1, serviceName: spec.name }),
  DaemonSet: () => ({}),
};

export function workloadManifest(
  spec: WorkloadSpec,
  labels: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const podLabels = { ...labels, app: spec.name };
  return {
    apiVersion: 'apps/v1',
    kind: spec.kind,
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      labels: podLabels,
      annotations: { [AUTO_ANNOTATION]: 'true', ...spec.annotations },
    },
    spec: {
      ...SPEC_BY_KIND[spec.kind](spec),
      selector: { matchLabels: { app: spec.name } },
      template: { metadata: { labels: podLabels }, spec: podSpec(spec) },
    },
  };
}
