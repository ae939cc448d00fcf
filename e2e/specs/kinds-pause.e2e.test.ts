// Pause period across a controller crash (§7.2, D16): a roll of a Deployment with
// `pause-period: 20s` pauses it and records paused-at in the same patch; kreload is then killed
// (SIGKILL: no drain, no in-memory timer survives) and started again; the new process resumes the
// Deployment at paused-at + 20 s. kube-controller-manager shows the pause: no new ReplicaSet while
// paused, one after the resume.
import { describe, expect, it } from 'vitest';
import { PAUSE_PERIOD, PAUSED_AT } from '../harness/annotations.ts';
import { KubeJson, recordAt, valueAt } from '../harness/crds.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, SourceClient } from '../harness/sources.ts';
import {
  annotationsOf,
  AUTO,
  awaitBaseline,
  BUILT_IN_APIS,
  controlledBy,
  createObject,
  keyOf,
  listObjects,
  podTemplate,
  readObject,
  strategyRow,
  uidOf,
  type ObjectRef,
} from './kinds-support.ts';

const PAUSE_MS = 20_000;
/** paused-at has whole seconds (§7.2 item 1): the pause began up to 1 s after it says. */
const TRUNCATION_MS = 1000;
/** Timers may fire a few ms early; the clocks are the same machine's. */
const EARLY_TOLERANCE_MS = 200;
/** Resume patch, watch delivery and the 100 ms poll below. */
const LATE_TOLERANCE_MS = 3000;

const cluster = sharedCluster();
const client = new KubeJson({ kc: cluster.kc });
const sources = new SourceClient({ kc: cluster.kc });
const envVars = strategyRow('env-vars');

describe('pause-period survives a kreload crash (§7.2 items 1, 4, 5)', () => {
  const fixture = useKreload({
    name: 'kinds-pause',
    args: ([namespace = '']) => [`--namespaces=${namespace}`, '--sync-delay=0'],
  });

  it('pauses with the roll, and the restarted process resumes at paused-at + 20s', async () => {
    const { namespace } = fixture;
    const name = 'paused';
    const configMap = 'paused-cfg';
    const ref: ObjectRef = { api: BUILT_IN_APIS.deployments, namespace, name };
    await sources.create(namespace, { type: 'CONFIGMAP', name: configMap, data: { v: '1' } });
    await createObject(client, ref, {
      metadata: { name, annotations: { [AUTO]: 'true', [PAUSE_PERIOD]: '20s' } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: podTemplate({ app: name, configMap }),
      },
    });
    const key = keyOf({ type: 'CONFIGMAP', name: configMap });
    const created = await awaitBaseline(client, ref, {
      [key]: configMapHash({ data: { v: '1' } }),
    });
    const replicaSets = async (): Promise<number> =>
      controlledBy(
        await listObjects(client, { api: BUILT_IN_APIS.replicasets, namespace }),
        uidOf(created),
      ).length;
    await pollUntil(async () => (await replicaSets()) === 1, {
      timeoutMs: 30_000,
      describe: `the first ReplicaSet of ${name}`,
    });

    const changedAt = Date.now();
    await sources.replace(namespace, { type: 'CONFIGMAP', name: configMap, data: { v: '2' } });
    const source = {
      type: 'CONFIGMAP',
      name: configMap,
      namespace,
      hash: configMapHash({ data: { v: '2' } }),
    } as const;

    // Item 1: the roll, spec.paused and paused-at arrive in one patch.
    const paused = await pollUntil(
      async () => {
        const current = await readObject(client, ref);
        return envVars.appliedHash(recordAt(current, ['spec', 'template']), source) === source.hash
          ? current
          : undefined;
      },
      { timeoutMs: 30_000, describe: `${name} to roll for ${source.hash}` },
    );
    expect(valueAt(paused, ['spec', 'paused'])).toBe(true);
    const pausedAtText = annotationsOf(paused)[PAUSED_AT] ?? '';
    expect(pausedAtText).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const pausedAt = Date.parse(pausedAtText);
    expect(pausedAt).toBeGreaterThanOrEqual(changedAt - TRUNCATION_MS);
    expect(pausedAt).toBeLessThanOrEqual(Date.now());

    // Crash and restart: only the annotation remembers the pause.
    await fixture.kill9();
    await fixture.start();
    const afterRestart = await readObject(client, ref);
    if (Date.now() < pausedAt + PAUSE_MS - TRUNCATION_MS) {
      expect(valueAt(afterRestart, ['spec', 'paused'])).toBe(true);
      expect(await replicaSets()).toBe(1);
    }

    const resumed = await pollUntil(
      async () => {
        const current = await readObject(client, ref);
        return valueAt(current, ['spec', 'paused']) === true
          ? undefined
          : { current, at: Date.now() };
      },
      { timeoutMs: PAUSE_MS + 20_000, intervalMs: 100, describe: `${name} to be resumed` },
    );
    expect(resumed.at).toBeGreaterThanOrEqual(pausedAt + PAUSE_MS - EARLY_TOLERANCE_MS);
    expect(resumed.at).toBeLessThanOrEqual(pausedAt + PAUSE_MS + TRUNCATION_MS + LATE_TOLERANCE_MS);
    expect(annotationsOf(resumed.current)).not.toHaveProperty(PAUSED_AT);
    expect(envVars.appliedHash(recordAt(resumed.current, ['spec', 'template']), source)).toBe(
      source.hash,
    );
    // The resumed Deployment rolls out the accumulated template: one new ReplicaSet.
    await pollUntil(async () => (await replicaSets()) === 2, {
      timeoutMs: 30_000,
      describe: `a second ReplicaSet of ${name} after the resume`,
    });
  });
});
