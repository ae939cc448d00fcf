// Restart windows and the flapping-source breaker (docs/windows-and-breaker.md) on the real control
// plane, kreload started as its CLI. A change outside a window is held and recorded on the
// workload; kreload is killed with -9 and started again; at the window's opening exactly one PATCH
// rolls both changes. A Secret rewritten every second rolls its workload at most --flap-max-changes
// times, writes one SourceFlapping Event, and rolls once more after the cool-down. Flag values
// are scaled down to keep the file short.
import { describe, expect, it } from 'vitest';
import { AUTO, stateJson } from '../harness/annotations.ts';
import { AuditLog } from '../harness/audit.ts';
import { auditedRequestsWhen, countByObject } from '../harness/audit-objects.ts';
import { waitForBaseline } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { KRELOAD_USER } from '../harness/rbac.ts';
import { envVarName, sourceHash, sourceKey, type SecretSpec } from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const RESTART_WINDOW = 'reloader.stakater.com/restart-window';
const PENDING_ROLL = 'kreload.io/pending-roll';
const FLAP_MAX_CHANGES = 3;
const COOL_DOWN_S = 8;

const fixture = useKreload({
  name: 'windows',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    '--enable-restart-windows',
    `--flap-max-changes=${String(FLAP_MAX_CHANGES)}`,
    '--flap-period=1m',
    `--flap-cool-down=${String(COOL_DOWN_S)}s`,
  ],
});

const secret = (name: string, value: string): SecretSpec => ({
  type: 'SECRET',
  name,
  data: { value },
});

/** The first whole minute at least `leadMs` from now, and a UTC window of 2 minutes there. */
function windowAhead(leadMs: number): { opensAt: number; value: string } {
  const opensAt = Math.ceil((Date.now() + leadMs) / 60_000) * 60_000;
  const at = new Date(opensAt);
  const cron = `${String(at.getUTCMinutes())} ${String(at.getUTCHours())} * * *`;
  return {
    opensAt,
    value: JSON.stringify({ timezone: 'UTC', windows: [{ cron, duration: '2m' }] }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

describe('a restart window', () => {
  it('holds two changes across kill -9; at its opening one PATCH rolls both', async () => {
    const { namespace, workloads, sources } = fixture;
    const auditLogPath = fixture.cluster.auditLogPath;
    if (auditLogPath === undefined) throw new Error('the shared cluster runs without an audit log');
    const audit = new AuditLog({ path: auditLogPath });
    const db = secret('db', 'one');
    const tls = secret('tls', 'one');
    await sources.create(namespace, db);
    await sources.create(namespace, tls);
    const window = windowAhead(75_000);
    const ref: WorkloadRef = await workloads.create('Deployment', {
      namespace,
      name: 'windowed',
      annotations: { [AUTO]: 'true', [RESTART_WINDOW]: window.value },
      podSpec: podSpec({
        app: { envFrom: [{ secretRef: { name: db.name } }, { secretRef: { name: tls.name } }] },
      }),
    });
    const baselined = await waitForBaseline(workloads, ref, {
      [sourceKey(db)]: sourceHash(db),
      [sourceKey(tls)]: sourceHash(tls),
    });

    const db2 = secret('db', 'two');
    const tls2 = secret('tls', 'two');
    await sources.replace(namespace, db2);
    await sources.replace(namespace, tls2);
    const pending = stateJson({
      [sourceKey(db2)]: sourceHash(db2),
      [sourceKey(tls2)]: sourceHash(tls2),
    });
    const held = await pollUntil(
      async () => {
        const view = await workloads.read(ref);
        return view.annotations[PENDING_ROLL] === pending ? view : undefined;
      },
      { timeoutMs: 20_000, describe: 'both changes recorded as pending' },
    );
    // A Deployment's generation counts annotation changes too: the template tells a roll.
    expect(held.containers.find((c) => c.name === APP)?.env).toEqual({});
    expect(held.templateAnnotations).toEqual(baselined.templateAnnotations);
    expect(Date.now()).toBeLessThan(window.opensAt);

    await fixture.kill9();
    const offset = await audit.mark();
    await fixture.start();
    await sleep(window.opensAt - Date.now() - 3_000);
    expect(
      (await workloads.read(ref)).containers.find((c) => c.name === APP)?.env,
      'no roll before the window opens',
    ).toEqual({});
    const rolled = await pollUntil(
      async () => {
        const view = await workloads.read(ref);
        const env = view.containers.find((c) => c.name === APP)?.env ?? {};
        return Object.keys(env).length > 0 ? view : undefined;
      },
      { timeoutMs: 30_000, describe: 'the roll at the opening' },
    );
    expect(Date.now()).toBeGreaterThanOrEqual(window.opensAt);
    expect(rolled.containers.find((c) => c.name === APP)?.env).toEqual({
      [envVarName(db2)]: sourceHash(db2),
      [envVarName(tls2)]: sourceHash(tls2),
    });
    expect(rolled.annotations[PENDING_ROLL]).toBeUndefined();
    await sleep(5_000);
    const requests = await auditedRequestsWhen(audit, {
      offset,
      username: KRELOAD_USER,
      done: (seen) => seen.some((r) => r.verb === 'patch' && r.name === ref.name),
    });
    expect(
      countByObject(requests.filter((r) => r.verb === 'patch' && r.namespace === namespace)),
    ).toEqual({ 'patch deployments windowed': 1 });
    expect((await workloads.settledRevisions(ref, 2)).revisions).toBe(2);
  }, 240_000);
});

describe('the flapping-source breaker', () => {
  it('a Secret rewritten every second: bounded rolls, one SourceFlapping, one roll after', async () => {
    const { namespace, workloads, sources, events } = fixture;
    const initial = secret('flappy', 'v0');
    await sources.create(namespace, initial);
    const ref: WorkloadRef = await workloads.create('Deployment', {
      namespace,
      name: 'flapped',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ secretRef: { name: initial.name } }] } }),
    });
    await waitForBaseline(workloads, ref, { [sourceKey(initial)]: sourceHash(initial) });
    const writes = 15;
    let last = initial;
    for (let index = 1; index <= writes; index += 1) {
      last = secret('flappy', `v${String(index)}`);
      await sources.replace(namespace, last);
      await sleep(1_000);
    }
    // Each roll is one more ReplicaSet.
    const whileFlapping = (await workloads.settledRevisions(ref, 1)).revisions - 1;
    expect(whileFlapping).toBeLessThanOrEqual(FLAP_MAX_CHANGES);
    const rolled = await pollUntil(
      async () => {
        const view = await workloads.read(ref);
        const env = view.containers.find((c) => c.name === APP)?.env ?? {};
        return env[envVarName(last)] === sourceHash(last) ? view : undefined;
      },
      { timeoutMs: (COOL_DOWN_S + 20) * 1000, describe: 'one roll with the latest content' },
    );
    expect(rolled.annotations[PENDING_ROLL]).toBeUndefined();
    await sleep(3_000);
    expect((await workloads.settledRevisions(ref, whileFlapping + 2)).revisions).toBe(
      whileFlapping + 2,
    );
    const flapping = (await events.about({ kind: 'Secret', namespace, name: initial.name })).filter(
      (event) => event.reason === 'SourceFlapping',
    );
    expect(flapping).toHaveLength(1);
    expect(flapping[0]?.type).toBe('Warning');
    console.log(
      `breaker e2e: ${String(writes)} writes at 1/s rolled ${String(whileFlapping)} time(s) while flapping, then once`,
    );
  }, 120_000);
});
