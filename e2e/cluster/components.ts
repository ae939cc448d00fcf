import path from 'node:path';
import { ensureFakeNodesReady, FAKE_NODE } from './fake-nodes.ts';
import { KWOK_STAGES } from './paths.ts';
import type { PkiPaths } from './pki.ts';
import { probe } from './probes.ts';

// Every command line of the control plane lives in this file, so flag drift between Kubernetes
// and etcd minors is fixed in one place (check `--help` of new binaries).

export interface ControlPlanePorts {
  readonly etcdClient: number;
  readonly etcdPeer: number;
  readonly apiserver: number;
  readonly controllerManager: number;
  readonly scheduler: number;
  readonly kwok: number;
}

export interface LaunchContext {
  readonly runDir: string;
  readonly binDir: string;
  readonly ports: ControlPlanePorts;
  readonly pki: PkiPaths;
  readonly caPem: string;
  readonly tokenFile: string;
  readonly adminKubeconfig: string;
  readonly adminToken: string;
  /** Set when the audit log is enabled. */
  readonly audit: { readonly policyPath: string; readonly logPath: string } | undefined;
  readonly controllers: readonly string[];
}

export type ComponentName =
  'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kwok';

export interface ComponentSpec {
  readonly name: ComponentName;
  readonly args: (ctx: LaunchContext) => string[];
  /** Human-readable readiness condition, for timeout messages. */
  readonly readyWhen: string;
  readonly isReady: (ctx: LaunchContext) => Promise<boolean>;
  readonly deadlineMs: number;
  /**
   * Part of the pod lifecycle (scheduling, fake kubelets) rather than of the API: a run started
   * with `withoutPodLifecycle` leaves it out, to measure what it costs.
   */
  readonly podLifecycle: boolean;
}

/** kube-controller-manager controllers: what e2e specs and benchmarks observe, nothing more (2 cores). */
export const DEFAULT_CONTROLLERS: readonly string[] = [
  'deployment-controller', // a template patch makes a new ReplicaSet
  'replicaset-controller',
  'statefulset-controller', // new ControllerRevision, status.updateRevision
  'daemonset-controller',
  'disruption-controller', // PodDisruptionBudget status, which the Eviction API reads (evict strategy)
  'job-controller', // Jobs create Pods
  'cronjob-controller', // CronJobs spawn Jobs
  'garbage-collector-controller', // owner-reference cleanup
  'namespace-controller', // deleting a test namespace really removes it
  'serviceaccount-controller', // `default` ServiceAccount per namespace; Pods are refused without it
  'root-ca-certificate-publisher-controller', // kube-root-ca.crt per namespace: realistic ConfigMap noise
];

const url = (port: number, pathname: string, scheme = 'https'): string =>
  `${scheme}://127.0.0.1:${port}${pathname}`;

async function etcdHealthy(ctx: LaunchContext): Promise<boolean> {
  const res = await probe({ url: url(ctx.ports.etcdClient, '/health', 'http') });
  return res.status === 200 && /"health"\s*:\s*"true"/.test(res.body);
}

async function apiserverReady(ctx: LaunchContext): Promise<boolean> {
  const res = await probe({ url: url(ctx.ports.apiserver, '/readyz'), ca: ctx.caPem });
  return res.status === 200 && res.body.trim() === 'ok';
}

async function controllerManagerReady(ctx: LaunchContext): Promise<boolean> {
  const health = await probe({
    url: url(ctx.ports.controllerManager, '/healthz'),
    skipTlsVerify: true,
  });
  if (health.status !== 200 || health.body.trim() !== 'ok') return false;
  // The serviceaccount controller has done its first pass: Pods can now be created in `default`.
  const account = await probe({
    url: url(ctx.ports.apiserver, '/api/v1/namespaces/default/serviceaccounts/default'),
    ca: ctx.caPem,
    bearerToken: ctx.adminToken,
  });
  return account.status === 200;
}

async function schedulerReady(ctx: LaunchContext): Promise<boolean> {
  const health = await probe({ url: url(ctx.ports.scheduler, '/healthz'), skipTlsVerify: true });
  return health.status === 200 && health.body.trim() === 'ok';
}

/** kwok answers its health check and reports every fake node Ready (it creates them if missing). */
async function kwokReady(ctx: LaunchContext): Promise<boolean> {
  const health = await probe({ url: url(ctx.ports.kwok, '/healthz', 'http') });
  if (health.status !== 200) return false;
  return ensureFakeNodesReady({
    server: url(ctx.ports.apiserver, ''),
    caPem: ctx.caPem,
    token: ctx.adminToken,
  });
}

function auditArgs(ctx: LaunchContext): string[] {
  if (ctx.audit === undefined) return [];
  return [
    `--audit-policy-file=${ctx.audit.policyPath}`,
    `--audit-log-path=${ctx.audit.logPath}`,
    '--audit-log-maxsize=0',
  ];
}

/** In start order; teardown runs in reverse. */
export const COMPONENTS: readonly ComponentSpec[] = [
  {
    name: 'etcd',
    args: (ctx) => {
      const client = `http://127.0.0.1:${ctx.ports.etcdClient}`;
      const peer = `http://127.0.0.1:${ctx.ports.etcdPeer}`;
      return [
        '--name=e2e',
        `--data-dir=${path.join(ctx.runDir, 'etcd')}`,
        '--log-level=warn',
        '--unsafe-no-fsync', // throwaway data: skip fsync, the slowest part on shared disks
        // The default 2 GiB fills up after about eight K1 runs on one control plane (22 000 objects
        // created and deleted each, their history kept until kube-apiserver's compaction): etcd then
        // refuses every write with `mvcc: database space exceeded`. 8 GiB is etcd's suggested maximum.
        `--quota-backend-bytes=${String(8 * 1024 ** 3)}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=e2e=${peer}`,
      ];
    },
    readyWhen: 'GET /health says "health":"true"',
    isReady: etcdHealthy,
    deadlineMs: 20_000,
    podLifecycle: false,
  },
  {
    name: 'kube-apiserver',
    args: (ctx) => [
      `--etcd-servers=http://127.0.0.1:${ctx.ports.etcdClient}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${ctx.ports.apiserver}`,
      `--tls-cert-file=${ctx.pki.apiserverCert}`,
      `--tls-private-key-file=${ctx.pki.apiserverKey}`,
      `--client-ca-file=${ctx.pki.caCert}`,
      `--token-auth-file=${ctx.tokenFile}`,
      '--authorization-mode=RBAC', // RBAC only, so kreload's permissions are really checked
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${ctx.pki.saPub}`,
      `--service-account-signing-key-file=${ctx.pki.saKey}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--endpoint-reconciler-type=none', // keeps a loopback address out of the `kubernetes` Endpoints
      '--profiling=false',
      ...auditArgs(ctx),
    ],
    readyWhen: 'GET /readyz (verified with the run CA) returns ok',
    isReady: apiserverReady,
    deadlineMs: 90_000,
    podLifecycle: false,
  },
  {
    name: 'kube-controller-manager',
    args: (ctx) => [
      `--kubeconfig=${ctx.adminKubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${ctx.ports.controllerManager}`,
      `--cert-dir=${path.join(ctx.runDir, 'kcm')}`,
      `--root-ca-file=${ctx.pki.caCert}`,
      `--controllers=${ctx.controllers.join(',')}`,
    ],
    readyWhen: 'GET /healthz returns ok and ServiceAccount default/default exists',
    isReady: controllerManagerReady,
    deadlineMs: 60_000,
    podLifecycle: false,
  },
  {
    name: 'kube-scheduler',
    args: (ctx) => [
      `--kubeconfig=${ctx.adminKubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${ctx.ports.scheduler}`,
      `--cert-dir=${path.join(ctx.runDir, 'scheduler')}`,
    ],
    readyWhen: 'GET /healthz returns ok',
    isReady: schedulerReady,
    deadlineMs: 60_000,
    podLifecycle: true,
  },
  {
    // Plays the kubelet of the fake nodes (e2e/cluster/fake-nodes.ts) with the stages of
    // e2e/cluster/kwok/stages.yaml: their pods become Running and Ready, or crash-loop on request.
    name: 'kwok',
    args: (ctx) => [
      `--kubeconfig=${ctx.adminKubeconfig}`,
      `--config=${KWOK_STAGES}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${FAKE_NODE.annotation.key}=${FAKE_NODE.annotation.value}`,
      `--server-address=127.0.0.1:${ctx.ports.kwok}`,
      '--cidr=10.244.0.0/16',
      '--node-ip=10.1.0.1',
    ],
    readyWhen: `GET /healthz returns 200 and the ${FAKE_NODE.count} fake nodes are Ready and untainted but for ${FAKE_NODE.taint.key}`,
    isReady: kwokReady,
    deadlineMs: 60_000,
    podLifecycle: true,
  },
];
