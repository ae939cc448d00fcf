/**
 * Ports of the reconciler. kube/ and watch/ implement them for real, src/testing/ in memory.
 * Nothing here carries source data: only hashes, UIDs and the kept annotations.
 */
import type {
  Annotations,
  AnnotationProblem,
  SkipReason,
  SourceKey,
  SourceType,
  SourceView,
  WorkloadKey,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import type { Patch } from '../rollout/patch.ts';
import type { EnvVarCollision, ReconcilePlan } from './plan.ts';

/** `(create, K, uid)` of §5.4. */
export interface CreateMark {
  readonly key: SourceKey;
  readonly uid: string;
}

/** `(delete, K, uid, last ignore/match values)` of §5.4; `sourceAnnotations` holds those values. */
export interface DeleteMark {
  readonly key: SourceKey;
  readonly uid: string;
  readonly sourceAnnotations: Annotations;
}

export interface WorkloadMarks {
  readonly creates: readonly CreateMark[];
  readonly deletes: readonly DeleteMark[];
}

export const NO_MARKS: WorkloadMarks = { creates: [], deletes: [] };

/** Source caches as the reconciler reads them (§9.2). Times are ms since the epoch. */
export interface SourceLookup {
  /**
   * The current object; for a SecretProviderClass a view whose hash is the desired hash of §4.4 and
   * whose annotations are those of the SPC object. Undefined: absent (or no SPCPS).
   */
  get(namespace: string, type: SourceType, name: string): SourceView | undefined;
  /** Names of the sources of one type in a namespace (candidates for reload lists). */
  namesInNamespace(namespace: string, type: SourceType): readonly string[];
  /** False while the type's cache is not synced, forbidden or its API is missing: D is unknown. */
  isHealthy(type: SourceType): boolean;
  /** `firstObserved(K)` of §5.4. */
  firstObserved(namespace: string, key: SourceKey): number | undefined;
  /** `lastChange(K)` of §5.4. */
  lastChange(namespace: string, key: SourceKey): number | undefined;
}

/** The workload store (§9.2 item 3). */
export interface WorkloadLookup {
  get(key: WorkloadKey): WorkloadView | undefined;
  /** `relevantSince(W)` of §5.4. */
  relevantSince(key: WorkloadKey): number | undefined;
}

/** Marks held per workload (§5.4); the leader consumes them when a reconcile completes. */
export interface MarkLedger {
  marksOf(key: WorkloadKey): WorkloadMarks;
  /** Drops exactly the given marks; marks added since they were read stay. */
  consume(key: WorkloadKey, marks: WorkloadMarks): void;
}

export interface WriteErrorOptions {
  readonly message: string;
  /** HTTP status; undefined for timeouts and network errors. */
  readonly status?: number | undefined;
  readonly retryable: boolean;
  /** 429 `Retry-After`, in ms. */
  readonly retryAfterMs?: number | undefined;
  readonly cause?: unknown;
}

/** A failed workload write, as the kube adapter maps it (§10). */
export class WriteError extends Error {
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(options: WriteErrorOptions) {
    super(options.message, { cause: options.cause });
    this.name = 'WriteError';
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Workload writes. Both methods reject with WriteError. */
export interface WorkloadWriter {
  /** Sends one patch with `fieldManager=kreload`; the body carries the resourceVersion precondition. */
  patch(ref: WorkloadRef, patch: Patch): Promise<void>;
  /** Fresh GET after a 409, projected to a view; undefined when the workload is gone. */
  get(ref: WorkloadRef): Promise<WorkloadView | undefined>;
}

export interface RolledEvent {
  readonly view: WorkloadView;
  readonly plan: ReconcilePlan;
  readonly attempts: number;
  /** From the first write attempt to the acknowledgement (reloader_action_latency_seconds). */
  readonly durationMs: number;
}

export interface FailedEvent {
  readonly key: WorkloadKey;
  readonly view: WorkloadView;
  readonly plan: ReconcilePlan;
  readonly error: WriteError;
  /** True after the last retryable attempt; false for an error that is never retried. */
  readonly gaveUp: boolean;
  readonly attempts: number;
}

export interface RetryEvent {
  readonly key: WorkloadKey;
  readonly error: WriteError;
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  readonly delayMs: number;
}

/** Hooks for metrics, Events and logs; every hook fires once per occasion (§13.2). */
export interface ReconcileObserver {
  onRolled(event: RolledEvent): void;
  onBaselined(event: { readonly view: WorkloadView; readonly plan: ReconcilePlan }): void;
  onSkipped(event: {
    readonly key: WorkloadKey;
    readonly view: WorkloadView;
    readonly reason: SkipReason;
  }): void;
  onDryRun(event: { readonly view: WorkloadView; readonly plan: ReconcilePlan }): void;
  onFailed(event: FailedEvent): void;
  onRetry(event: RetryEvent): void;
  /** The workload vanished before or during the write (404): debug level only. */
  onGone(event: { readonly key: WorkloadKey }): void;
  onProblems(event: {
    readonly view: WorkloadView;
    readonly problems: readonly AnnotationProblem[];
  }): void;
  onCollision(event: {
    readonly view: WorkloadView;
    readonly collisions: readonly EnvVarCollision[];
  }): void;
}
