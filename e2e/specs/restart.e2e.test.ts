// Spec §5 (level-triggered, restart-safe) and §5.7 (migration from Reloader): kreload is stopped,
// sources change, workloads appear, and on the next start exactly the workloads whose applied or
// baseline hash differs roll once. Nothing else is written but the baselines of workloads kreload
// has never seen, kept in the baseline store (docs/adr/0046), not even with --reload-on-create and
// --reload-on-delete (D9: the initial list is never a creation or a deletion).
import { beforeAll, describe, expect, it } from 'vitest';
import { AUTO, BASELINE, CONFIGMAP_RELOAD, baselineAfterRoll } from '../harness/annotations.ts';
import { AuditLog } from '../harness/audit.ts';
import { auditedRequestsWhen, countByObject } from '../harness/audit-objects.ts';
import { waitForBaseline, waitForRecord } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { MetricsSnapshot, scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { KRELOAD_USER } from '../harness/rbac.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import {
  APP,
  WORKLOAD_KINDS,
  podSpec,
  type WorkloadKindRow,
  type WorkloadRef,
  type WorkloadSpec,
  type WorkloadView,
} from '../harness/workloads.ts';

const fixture = useKreload({
  name: 'restart',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
  startInBeforeAll: false,
});

const cm = (name: string, value: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name,
  data: { value },
});
const CHANGED = cm('cfg-changed', 'before');
const CHANGED_WHILE_DOWN = cm('cfg-changed', 'after');
const STABLE = cm('cfg-stable', 'same');
/** Its env var name is STABLE's too (§6.3). */
const STABLE_TWIN = cm('cfg.stable', 'twin');
const DOOMED = cm('cfg-doomed', 'gone soon');
const LATER = cm('cfg-later', 'created while down');

const envFrom = (source: ConfigMapSpec) => ({ envFrom: [{ configMapRef: { name: source.name } }] });
const auto = { [AUTO]: 'true' };

/** What each workload is and what the second start must do to it. */
interface Role {
  readonly id: string;
  /** Created while kreload is down (phase B) rather than while it runs (phase A). */
  readonly createdWhileDown: boolean;
  readonly spec: (namespace: string, name: string) => WorkloadSpec;
  /** Baseline kreload #1 records (phase A). */
  readonly firstBaseline?: Record<string, string>;
  /**
   * After the restart: the app container's env, the baseline kreload holds (in the store, or in W
   * once rolled), and whether it rolled: a roll is the only write to the workload.
   */
  readonly env: Record<string, string>;
  readonly baseline: Record<string, string>;
  readonly rolls: boolean;
}

/** Patches kreload #2 sends to the workload: its roll; first-sight baselines go to the store. */
const patchesOf = (role: Role) => (role.rolls ? 1 : 0);

function workload(
  annotations: Record<string, string>,
  app: object,
): (namespace: string, name: string) => WorkloadSpec {
  return (namespace, name) => ({ namespace, name, annotations, podSpec: podSpec({ app }) });
}

const ROLES: readonly Role[] = [
  {
    id: 'changed',
    createdWhileDown: false,
    spec: workload(auto, envFrom(CHANGED)),
    firstBaseline: { [sourceKey(CHANGED)]: sourceHash(CHANGED) },
    env: { [envVarName(CHANGED)]: sourceHash(CHANGED_WHILE_DOWN) },
    baseline: {},
    rolls: true,
  },
  {
    id: 'stable',
    createdWhileDown: false,
    spec: workload(auto, envFrom(STABLE)),
    firstBaseline: { [sourceKey(STABLE)]: sourceHash(STABLE) },
    env: {},
    baseline: { [sourceKey(STABLE)]: sourceHash(STABLE) },
    rolls: false,
  },
  {
    id: 'doomed',
    createdWhileDown: false,
    spec: workload(auto, envFrom(DOOMED)),
    firstBaseline: { [sourceKey(DOOMED)]: sourceHash(DOOMED) },
    env: {},
    baseline: { [sourceKey(DOOMED)]: sourceHash(DOOMED) },
    rolls: false,
  },
  {
    id: 'later',
    createdWhileDown: false,
    spec: workload({ [CONFIGMAP_RELOAD]: LATER.name }, {}),
    env: {},
    baseline: { [sourceKey(LATER)]: sourceHash(LATER) },
    rolls: false,
  },
  {
    id: 'plain',
    createdWhileDown: false,
    spec: workload({}, envFrom(CHANGED)),
    env: {},
    baseline: {},
    rolls: false,
  },
  {
    id: 'migrated',
    createdWhileDown: true,
    spec: workload(auto, {
      ...envFrom(STABLE),
      env: [{ name: envVarName(STABLE), value: sourceHash(STABLE) }],
    }),
    env: { [envVarName(STABLE)]: sourceHash(STABLE) },
    baseline: {},
    rolls: false,
  },
  {
    // A Reloader-made variable shared by two sources is no applied state: baselines, no restart.
    id: 'collided',
    createdWhileDown: true,
    spec: workload(auto, {
      envFrom: [
        { configMapRef: { name: STABLE.name } },
        { configMapRef: { name: STABLE_TWIN.name } },
      ],
      env: [{ name: envVarName(STABLE), value: sourceHash(STABLE) }],
    }),
    env: { [envVarName(STABLE)]: sourceHash(STABLE) },
    baseline: {
      [sourceKey(STABLE)]: sourceHash(STABLE),
      [sourceKey(STABLE_TWIN)]: sourceHash(STABLE_TWIN),
    },
    rolls: false,
  },
  {
    id: 'missed',
    createdWhileDown: true,
    spec: workload(auto, {
      ...envFrom(CHANGED),
      env: [{ name: envVarName(CHANGED), value: sourceHash(CHANGED) }],
    }),
    env: { [envVarName(CHANGED)]: sourceHash(CHANGED_WHILE_DOWN) },
    baseline: {},
    rolls: true,
  },
  {
    id: 'fresh',
    createdWhileDown: true,
    spec: workload(auto, envFrom(CHANGED)),
    env: {},
    baseline: { [sourceKey(CHANGED)]: sourceHash(CHANGED_WHILE_DOWN) },
    rolls: false,
  },
];

interface Case {
  readonly label: string;
  readonly kind: WorkloadKindRow;
  readonly role: Role;
  readonly name: string;
}

const CASES: readonly Case[] = WORKLOAD_KINDS.flatMap((kind) =>
  ROLES.map((role) => ({
    label: `${kind.kind} ${role.id}`,
    kind,
    role,
    name: `${kind.short}-${role.id}`,
  })),
);

function refOf(c: Case): WorkloadRef {
  return { kind: c.kind.kind, namespace: fixture.namespace, name: c.name };
}

describe('controller stopped → sources changed → controller started', () => {
  const beforeRestart = new Map<string, WorkloadView>();
  let patchesByObject: Record<string, number> = {};
  let restarted: MetricsSnapshot;

  beforeAll(async () => {
    const { namespace, workloads, sources } = fixture;
    const auditLogPath = fixture.cluster.auditLogPath;
    if (auditLogPath === undefined) throw new Error('the shared cluster runs without an audit log');
    const audit = new AuditLog({ path: auditLogPath });

    // Phase A: kreload #1 sees the first workloads and records their baselines.
    const first = await fixture.start();
    const since = await scrapeMetrics(first);
    for (const source of [CHANGED, STABLE, STABLE_TWIN, DOOMED]) {
      await sources.create(namespace, source);
    }
    const phaseA = CASES.filter((c) => !c.role.createdWhileDown);
    for (const c of phaseA) await workloads.create(c.kind.kind, c.role.spec(namespace, c.name));
    for (const c of phaseA) {
      if (c.role.firstBaseline) await waitForBaseline(workloads, refOf(c), c.role.firstBaseline);
    }
    await waitUntilSettled(first, {
      since,
      events: WORKLOAD_KINDS.map((kind) => ({
        resource: kind.resource,
        event: ['add', 'update'] as const,
        atLeast: ROLES.filter((r) => !r.createdWhileDown).length,
      })),
    });
    await fixture.stop();

    // Phase B: while nobody watches.
    await sources.replace(namespace, CHANGED_WHILE_DOWN);
    await sources.delete(namespace, DOOMED);
    await sources.create(namespace, LATER);
    for (const c of CASES.filter((x) => x.role.createdWhileDown)) {
      await workloads.create(c.kind.kind, c.role.spec(namespace, c.name));
    }
    for (const c of CASES) {
      await workloads.settledRevisions(refOf(c));
      beforeRestart.set(c.name, await workloads.read(refOf(c)));
    }

    // Phase C: kreload #2, with the create and delete flags on.
    const offset = await audit.mark();
    const second = await fixture.start(['--reload-on-create=true', '--reload-on-delete=true']);
    restarted = await waitUntilSettled(second, {
      since: new MetricsSnapshot({ samples: [] }),
      minReconciles: CASES.length,
      timeoutMs: 60_000,
    });
    const expectedPatches = CASES.reduce((sum, c) => sum + patchesOf(c.role), 0);
    const requests = await auditedRequestsWhen(audit, {
      offset,
      username: KRELOAD_USER,
      done: (seen) => seen.filter((r) => r.verb === 'patch').length >= expectedPatches,
    });
    patchesByObject = countByObject(
      requests.filter((r) => r.verb === 'patch' && r.namespace === namespace),
    );
  }, 180_000);

  it.each(CASES)('$label: patched exactly as often as its state requires', (c) => {
    expect(patchesByObject[`patch ${c.kind.resource} ${c.name}`] ?? 0).toBe(patchesOf(c.role));
  });

  it('sends no patch to anything else', () => {
    const expected = Object.fromEntries(
      CASES.filter((c) => patchesOf(c.role) > 0).map((c) => [
        `patch ${c.kind.resource} ${c.name}`,
        patchesOf(c.role),
      ]),
    );
    expect(patchesByObject).toEqual(expected);
  });

  it.each(CASES)('$label: template, baseline and generation after the restart', async (c) => {
    const ref = refOf(c);
    const before = beforeRestart.get(c.name);
    const evidence = await fixture.workloads.settledRevisions(ref, c.role.rolls ? 2 : 1);
    const after = await fixture.workloads.read(ref);
    expect(after.containers.find((x) => x.name === APP)?.env).toEqual(c.role.env);
    const { role } = c;
    // A roll writes B into W, `{}` at least when the store held the workload's record.
    expect(after.annotations[BASELINE]).toBe(
      role.rolls
        ? baselineAfterRoll(role.baseline, role.firstBaseline !== undefined)[BASELINE]
        : undefined,
    );
    // Otherwise B is the store's record, which a roll removes.
    const kept = !role.rolls && Object.keys(role.baseline).length > 0;
    await waitForRecord(fixture.workloads, ref, after, kept ? role.baseline : undefined);
    expect(after.generation).toBe((before?.generation ?? 0) + (role.rolls ? 1 : 0));
    // Baselines never touch the template, so every workload had one revision before the restart.
    expect(evidence.revisions).toBe(c.role.rolls ? 2 : 1);
  });

  it('counts exactly the rolls of the affected workloads', () => {
    const rolls = CASES.filter((c) => c.role.rolls).length;
    expect(restarted.value('reloader_reload_executed_total', { success: 'true' })).toBe(rolls);
    expect(restarted.value('reloader_reload_executed_total', { success: 'false' })).toBe(0);
  });
});
