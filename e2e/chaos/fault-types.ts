// The fault rows' shape and what the suite hands each row: one module of types, so the rows
// (faults.ts, shard-faults.ts) and the suite share them without importing each other.
import type { KubeConfig } from '@kubernetes/client-node';
import type { ControlPlane } from '../cluster/control-plane.ts';
import type { AuditLog } from '../harness/audit.ts';
import type { MetricsSnapshot } from '../harness/metrics.ts';
import type { ChaosFleet, FleetShape } from './fleet.ts';
import type { KreloadReplicas } from './replicas.ts';
import type { ShardLeases, ShardRowLayout } from './shards.ts';
import type { ToxiproxyProxy } from './toxiproxy.ts';

export interface FaultContext {
  /** The window's ConfigMap change, resolving to its hash; every fault calls it exactly once. */
  readonly changeSource: () => Promise<string>;
  /** Changes another ConfigMap of the namespace that no workload uses: etcd revisions, no rolls. */
  readonly changeNoise: (count: number) => Promise<void>;
  readonly proxy: ToxiproxyProxy;
  readonly controlPlane: ControlPlane;
  readonly replicas: KreloadReplicas;
  readonly audit: AuditLog;
  /** Seeded, per iteration: where in the fan-out a kill lands. */
  readonly random: () => number;
  /** kreload's --sync-delay: rolls start this long after the change. */
  readonly syncDelayMs: number;
  readonly fleetSize: number;
  /** The fault's fleet: its workload names and the ConfigMap they track. */
  readonly fleet: ChaosFleet;
  /** The namespace of the fleet the fault is aimed at. */
  readonly namespace: string;
  /** Every namespace the fault is aimed at, `namespace` first (FaultRow.activeActive: several). */
  readonly namespaces: readonly string[];
  /** The bucket Leases, for active-active rows. */
  readonly shards: ShardLeases | undefined;
  /** The row's bystander namespace (FaultRow.bystander), watched by the same kreload. */
  readonly bystander: Bystander | undefined;
  readonly admin: KubeConfig;
  /** kube-apiserver itself, not the proxy, for requests of the suite's own. */
  readonly direct: { readonly server: string; readonly caPath: string };
  /** kreload's ServiceAccount token. */
  readonly kreloadToken: string;
  readonly mintToken: (serviceAccount: string, namespace: string) => Promise<string>;
  /** The leader's /metrics now. */
  readonly kreloadMetrics: () => Promise<MetricsSnapshot>;
}

export interface Bystander {
  readonly namespace: string;
  /** Its fleet shows the rollout of the window's change (call after changeSource). */
  converged(): Promise<boolean>;
}

/** A per-iteration condition of a fault row; the row is clean only if every check passed. */
export interface FaultCheck {
  readonly name: string;
  readonly passed: boolean;
  readonly detail: string;
}

export interface FaultEvidence {
  /** How often the fault hit: writes whose response was lost, watches cut, kills, 429s… */
  readonly injected: number;
  readonly note: string;
  /** `injected` by `verb resource`, where the fault hits API requests. */
  readonly byVerb?: Readonly<Record<string, number>>;
  readonly checks?: readonly FaultCheck[];
  /** Checks that need the window to be over (kreload converged): the suite runs them then. */
  readonly verify?: () => Promise<readonly FaultCheck[]>;
}

export interface FaultRow {
  readonly id: string;
  /** The fault, as the table names it. */
  readonly title: string;
  /** How it is injected, for docs/reliability.md. */
  readonly how: string;
  /** kreload replicas (2 for a leader failover). */
  readonly replicas: number;
  /**
   * Run with --enable-ha. Off where the fault cuts kreload off for longer than the Lease lasts
   * (kreload would exit on the lost Lease and relist, hiding the fault); on for the failover, and
   * for lost responses, where the Lease renewals every 2 s keep a pooled connection open.
   */
  readonly ha: boolean;
  /** Longest wait for convergence after the fault is over. */
  readonly convergeTimeoutMs: number;
  /** Iterations of `npm run chaos` without --iterations. */
  readonly defaultIterations: number;
  /** A second namespace with the same fleet that kreload watches but the fault leaves alone. */
  readonly bystander?: boolean;
  /** The fleet this row runs, from the one asked for (default: that one). */
  readonly fleet?: (requested: FleetShape) => FleetShape;
  /**
   * The fleet's first Deployment, every change's canary, crash-loops on the "during" change
   * (ChaosFleetDeps.crashingCanaryOn): that change fails its canary.
   */
  readonly crashingCanary?: boolean;
  /**
   * Replicas in `--shard-mode=active-active` (default buckets), the fleet (FaultRow.fleet) in each
   * of several namespaces; a replica that exits comes back as a new pod, as a Deployment's do.
   */
  readonly activeActive?: ShardRowLayout;
  /** kreload flags of this row, after the suite's own (namespaces, strategy, HA, sync delay). */
  readonly kreloadArgs?: readonly string[];
  inject(ctx: FaultContext): Promise<FaultEvidence>;
}
