import type { WorkloadKind } from '../core/types.ts';

/** Content type of a patch (§10): strategic merge for built-in kinds, merge or JSON patch for CRDs. */
export type PatchType = 'strategic' | 'merge' | 'json';

/** Where a kind keeps the applied state A of §5.1: pod-template (PT) or workload (W) annotations. */
export type AppliedStatePlacement = 'PT' | 'W';

/**
 * What a roll does (§7): patch the pod template, create a Job from the template (CronJob), or delete
 * and recreate the object (Job).
 */
export type RollAction = 'template-patch' | 'create-job' | 'recreate';

/** One supported workload kind: everything that varies by kind, in one row. */
export interface WorkloadKindRow {
  readonly kind: WorkloadKind;
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** `group/version`, or `version` for the core group. */
  readonly apiVersion: string;
  /** Resource name: URL segment, RBAC resource and `resource_type` metric label (§13.2). */
  readonly plural: string;
  /** Path of the pod template (PT) inside the object. */
  readonly templatePath: readonly string[];
  /** Patch type for template changes. */
  readonly templatePatchType: PatchType;
  /** Patch type for metadata-only writes (baselines, W state). */
  readonly metadataPatchType: PatchType;
  readonly appliedState: AppliedStatePlacement;
  /** Argo Rollout: W `rollout-strategy: restart` moves the applied state to W (§7.5). */
  readonly supportsRestartStrategy: boolean;
  readonly rollAction: RollAction;
  /** Whether deleting a tracked source can roll it (§5.1 MARKER; Job and CronJob never do, D11). */
  readonly rollsOnDelete: boolean;
  /** Whether `pause-period` applies (§7.2). */
  readonly supportsPausePeriod: boolean;
}

const APPS_V1 = { group: 'apps', version: 'v1', apiVersion: 'apps/v1' } as const;
const POD_TEMPLATE = ['spec', 'template'] as const;

/** The template-patching built-in kinds share everything but their names (§7.1). */
const BUILT_IN_TEMPLATE_KIND = {
  ...APPS_V1,
  templatePath: POD_TEMPLATE,
  templatePatchType: 'strategic',
  metadataPatchType: 'strategic',
  appliedState: 'PT',
  supportsRestartStrategy: false,
  rollAction: 'template-patch',
  rollsOnDelete: true,
} as const;

/**
 * Supported kinds. CronJob, Job, Rollout and DeploymentConfig get a row once their roll actions
 * exist; the row shape already carries what they need (e.g. CronJob: templatePath
 * `spec.jobTemplate.spec.template`, appliedState W, rollAction create-job, rollsOnDelete false).
 */
export const WORKLOAD_KINDS: readonly WorkloadKindRow[] = [
  {
    ...BUILT_IN_TEMPLATE_KIND,
    kind: 'Deployment',
    plural: 'deployments',
    supportsPausePeriod: true,
  },
  {
    ...BUILT_IN_TEMPLATE_KIND,
    kind: 'DaemonSet',
    plural: 'daemonsets',
    supportsPausePeriod: false,
  },
  {
    ...BUILT_IN_TEMPLATE_KIND,
    kind: 'StatefulSet',
    plural: 'statefulsets',
    supportsPausePeriod: false,
  },
];

/** Thrown when a kind without a row reaches code that needs one: a wiring bug, not bad input. */
export class UnsupportedKindError extends Error {
  constructor(kind: string) {
    super(`workload kind ${kind} is not supported`);
    this.name = 'UnsupportedKindError';
  }
}

export function findKindRow(kind: WorkloadKind): WorkloadKindRow | undefined {
  return WORKLOAD_KINDS.find((row) => row.kind === kind);
}

export function kindRow(kind: WorkloadKind): WorkloadKindRow {
  const row = findKindRow(kind);
  if (!row) throw new UnsupportedKindError(kind);
  return row;
}

export function findKindRowByPlural(plural: string): WorkloadKindRow | undefined {
  return WORKLOAD_KINDS.find((row) => row.plural === plural);
}

/**
 * Where this workload keeps its applied state: the kind's placement, except that an Argo Rollout
 * with `rollout-strategy: restart` keeps it in W (§5.1, §7.5).
 */
export function appliedStatePlacement(
  row: WorkloadKindRow,
  workloadAnnotations: Readonly<Record<string, string>>,
  rolloutStrategyKey: string,
): AppliedStatePlacement {
  if (row.supportsRestartStrategy && workloadAnnotations[rolloutStrategyKey] === 'restart') {
    return 'W';
  }
  return row.appliedState;
}
