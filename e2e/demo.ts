/**
 * `npm run demo`: boots a real local control plane (building it on the first run), starts kreload
 * as its CLI under its own ServiceAccount, and shows one reload: an annotated Deployment whose pods
 * run on kwok's fake nodes, a change to its ConfigMap, the new ReplicaSet, the old pods replaced by
 * new ones and the Events. Then it keeps kreload running against the
 * cluster until Ctrl-C, with a kubeconfig to try more. `--once` stops after the demo.
 *
 * The control plane and kreload run in process groups of their own, so a terminal's Ctrl-C reaches
 * only npm and this script: everything they started is stopped here, exactly once, before exiting
 * (SIGINT, SIGTERM, kreload exiting by itself and a failure all end in the same shutdown). The npm
 * script `exec`s node, so the SIGTERM npm forwards reaches this process instead of a shell.
 */
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { readFile } from 'node:fs/promises';
import { startCluster, type StartedCluster } from './harness/cluster.ts';
import { startKreload, type KreloadProcess } from './harness/kreload-process.ts';
import { PodLifecycle, runnable } from './harness/pod-lifecycle.ts';
import { BaselineStoreReader } from './harness/baseline-store.ts';
import { pollUntil } from './harness/poll.ts';
import { installKreloadIdentity } from './harness/rbac.ts';

const once = process.argv.includes('--once');
const NAMESPACE = 'demo';
const say = (text: string): void => {
  process.stdout.write(`\n==> ${text}\n`);
};

let cluster: StartedCluster | undefined;
let kreload: KreloadProcess | undefined;
// A signal during the boot aborts it; startCluster then stops what it started and rejects.
const booting = new AbortController();
let stopping: Promise<never> | undefined;
/** The one shutdown: later callers (a second Ctrl-C, kreload's exit) wait for the first. */
const shutdown = (code: number): Promise<never> => {
  stopping ??= (async () => {
    booting.abort();
    await kreload?.stop().catch((error: unknown) => {
      process.stderr.write(`stopping kreload: ${String(error)}\n`);
    });
    await cluster?.stop().catch((error: unknown) => {
      process.stderr.write(`stopping the control plane: ${String(error)}\n`);
    });
    process.exit(code);
  })();
  return stopping;
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (stopping === undefined) say(`${signal}: stopping kreload and the control plane`);
    void shutdown(0);
  });
}

try {
  say('starting a local control plane (the first run builds it from source: about 10 minutes)');
  cluster = await startCluster({
    signal: booting.signal,
    onProgress: (message) => {
      process.stdout.write(`    ${message}\n`);
    },
  });
  const core = cluster.kc.makeApiClient(CoreV1Api);
  const apps = cluster.kc.makeApiClient(AppsV1Api);
  const identity = await installKreloadIdentity(cluster);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await core.createNamespacedConfigMap({
    namespace: NAMESPACE,
    body: { metadata: { name: 'app-config' }, data: { greeting: 'hello' } },
  });
  await apps.createNamespacedDeployment({
    namespace: NAMESPACE,
    body: {
      metadata: { name: 'api', annotations: { 'reloader.stakater.com/auto': 'true' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'api' } },
        template: {
          metadata: { labels: { app: 'api' } },
          // Scheduled on the fake nodes, where kwok plays the kubelet: the pods become Ready.
          spec: runnable({
            containers: [
              { name: 'app', image: 'nginx', envFrom: [{ configMapRef: { name: 'app-config' } }] },
            ],
          }),
        },
      },
    },
  });
  say(
    'created ConfigMap demo/app-config and Deployment demo/api (reloader.stakater.com/auto: "true")',
  );

  kreload = await startKreload({
    name: 'demo',
    kubeconfig: identity.kubeconfigPath,
    args: ['--namespaces=demo', '--sync-delay=1s'],
    // The default, which the e2e harness otherwise pins to `workload`.
    env: { KRELOAD_BASELINE_STORE: 'namespace' },
  });
  say(
    `kreload is running (pid ${kreload.pid}, metrics on http://127.0.0.1:${kreload.metricsPort}/metrics)`,
  );

  const deployment = () => apps.readNamespacedDeployment({ name: 'api', namespace: NAMESPACE });
  const baselines = new BaselineStoreReader({ kc: cluster.kc });
  await pollUntil(
    async () => {
      const object = await deployment();
      const uid = object.metadata?.uid ?? '';
      return (
        (await baselines.recordOf({ kind: 'Deployment', namespace: NAMESPACE }, uid)) !== undefined
      );
    },
    { timeoutMs: 30_000, describe: 'kreload records the baseline of demo/api' },
  );
  const [store] = await baselines.objectsOf(NAMESPACE);
  say(
    `first sight: kreload recorded a baseline in ConfigMap ${store?.metadata?.namespace ?? ''}/${store?.metadata?.name ?? ''}; ` +
      'demo/api was not written to, no pod was restarted',
  );
  const pods = new PodLifecycle({ kc: cluster.kc });
  const ref = { kind: 'Deployment', namespace: NAMESPACE, name: 'api' } as const;
  const showPods = async (): Promise<void> => {
    process.stdout.write('    NAME                    READY   STATUS    NODE\n');
    for (const pod of await pods.pods(ref)) {
      process.stdout.write(
        `    ${pod.name.padEnd(24)}${(pod.ready ? '1/1' : '0/1').padEnd(8)}${pod.phase.padEnd(10)}${pod.node ?? ''}\n`,
      );
    }
  };
  await pods.waitComplete(ref);
  say('pods before the change (kubectl -n demo get pods):');
  await showPods();

  await core.patchNamespacedConfigMap(
    { name: 'app-config', namespace: NAMESPACE, body: { data: { greeting: 'hello, world' } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  say('changed ConfigMap demo/app-config (greeting: "hello, world")');

  const replicaSets = () => apps.listNamespacedReplicaSet({ namespace: NAMESPACE });
  await pollUntil(async () => (await replicaSets()).items.length === 2, {
    timeoutMs: 60_000,
    describe: 'the Deployment rolls to a second ReplicaSet',
  });
  const rolled = await deployment();
  const env = rolled.spec?.template.spec?.containers[0]?.env ?? [];
  say('kreload rolled the Deployment:');
  for (const variable of env)
    process.stdout.write(`    env ${variable.name}=${variable.value ?? ''}\n`);
  for (const rs of (await replicaSets()).items) {
    process.stdout.write(
      `    ReplicaSet ${rs.metadata?.name ?? ''} (revision ${rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? '?'})\n`,
    );
  }
  await pods.waitComplete(ref);
  say('pods after the rollout: every old pod replaced by a new one');
  await showPods();
  const events = await core.listNamespacedEvent({ namespace: NAMESPACE });
  for (const event of events.items.filter((e) => e.source?.component === 'kreload')) {
    process.stdout.write(`    Event ${event.reason ?? ''}: ${event.message ?? ''}\n`);
  }
  const log = await readFile(kreload.logPath, 'utf8');
  say('kreload log:');
  process.stdout.write(
    log
      .split('\n')
      .map((line) => `    ${line}`)
      .join('\n'),
  );

  if (once) await shutdown(0);
  say('kreload keeps running. In another shell:');
  process.stdout.write(
    `    export KUBECONFIG=${cluster.kubeconfigPath}   # run directory ${cluster.runDir}\n` +
      `    kubectl -n demo edit configmap app-config   # then: kubectl -n demo get rs,pods\n` +
      `    curl -s http://127.0.0.1:${kreload.metricsPort}/metrics | grep reloader_\n` +
      '    Ctrl-C here stops kreload and the control plane.\n',
  );
  const exit = await kreload.exit;
  if (stopping === undefined)
    process.stderr.write(
      `kreload exited by itself (code ${String(exit.code)}, signal ${String(exit.signal)})\n`,
    );
  await shutdown(1);
} catch (error) {
  process.stderr.write(
    `demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  if (kreload) process.stderr.write(await readFile(kreload.logPath, 'utf8').catch(() => ''));
  await shutdown(1);
}
