// The active-active rows: a member killed mid fan-out, and the replicas scaled 3 → 5 → 2 mid
// fan-out. Both read the bucket Leases (shards.ts) for the takeover and the movement, and the audit
// log for the rolls: every apps workload of the fleet must get exactly one acknowledged PATCH.
import { setTimeout as sleep } from 'node:timers/promises';
import { isWrite, kreloadRequestsSince } from '../harness/ops-audit.ts';
import { PollTimeoutError, pollUntil } from '../harness/poll.ts';
import { WORKLOAD_KINDS } from '../harness/workloads.ts';
import { countRollPatches } from './checks.ts';
import type { FaultCheck, FaultContext, FaultEvidence } from './fault-types.ts';
import {
  movement,
  namespacesOf,
  SHARD_BUCKETS,
  type BucketHolders,
  type ShardLeases,
} from './shards.ts';

/** `--leader-election-lease-duration` of the rows: a dead member's buckets wait this long. */
export const SHARD_LEASE_DURATION_MS = 15_000;
/** The takeover bound the rows check: the lease duration + 5 s. */
const TAKEOVER_BOUND_MS = SHARD_LEASE_DURATION_MS + 5000;
const SETTLE_TIMEOUT_MS = 60_000;
/** Scaling 3 → 5 may move at most this share of the namespaces (the new members' fair share). */
const MAX_MOVED_SHARE = 2 / 5;
const SCALE_FROM = 3;
const SCALE_UP_BY = 2;
const SCALE_DOWN_BY = 3;

function shardsOf(ctx: FaultContext): ShardLeases {
  if (ctx.shards === undefined) throw new Error('an active-active row runs without shard Leases');
  return ctx.shards;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The fleet's workloads (`namespace/name`) with an acknowledged kreload write since `offset`, and
 * when: the workload itself, or a Job of its (a CronJob's run is named `<cronjob>-…`); Events aside.
 */
async function writesByWorkload(
  ctx: FaultContext,
  offset: number,
  namespaces: readonly string[],
): Promise<Map<string, number[]>> {
  const workloads = ctx.fleet.allNames();
  const byWorkload = new Map<string, number[]>();
  for (const request of await kreloadRequestsSince(ctx.audit, offset)) {
    if (!isWrite(request) || request.code >= 300 || !namespaces.includes(request.namespace))
      continue;
    if (request.resource === 'events') continue;
    const workload = workloads.find(
      (name) => request.name === name || request.name.startsWith(`${name}-`),
    );
    if (workload === undefined) continue;
    const key = `${request.namespace}/${workload}`;
    const times = byWorkload.get(key) ?? [];
    times.push(request.receivedAt);
    byWorkload.set(key, times);
  }
  return byWorkload;
}

/**
 * Every apps workload of the fleet has exactly one roll PATCH since `offset`: answered 200, or cut
 * by the SIGKILL of its sender (`kills`: when each kill had landed) without an answer (checks.ts).
 */
async function onePatchEach(
  ctx: FaultContext,
  offset: number,
  kills: readonly number[],
): Promise<FaultCheck> {
  const resources = new Set<string>(WORKLOAD_KINDS.map((row) => row.resource));
  const expected = ctx.namespaces.flatMap((namespace) =>
    WORKLOAD_KINDS.flatMap((row) =>
      ctx.fleet.names(row.kind).map((name) => `${namespace}/${row.resource}/${name}`),
    ),
  );
  const patches = (await kreloadRequestsSince(ctx.audit, offset, { withPanics: true }))
    .filter(
      (request) =>
        request.verb === 'patch' &&
        resources.has(request.resource) &&
        ctx.namespaces.includes(request.namespace),
    )
    .map((request) => ({
      workload: `${request.namespace}/${request.resource}/${request.name}`,
      code: request.code,
      stage: request.stage,
      receivedAt: request.receivedAt,
    }));
  const counts = countRollPatches({ patches, expected, kills });
  const list = (items: readonly string[]): string =>
    items.length === 0 ? '' : `: ${items.slice(0, 3).join(', ')}`;
  return {
    name: 'one roll PATCH per apps workload (audit log)',
    passed: counts.once === expected.length,
    detail: [
      `${String(counts.once)} of ${String(expected.length)} PATCHed once`,
      `${String(counts.cut.length)} of them by a PATCH cut by the kill of its sender${list(counts.cut)}`,
      `${String(counts.twice.length)} more than once${list(counts.twice.map(([key, count]) => `${key} ×${String(count)}`))}`,
      `${String(counts.none.length)} without${list(counts.none)}`,
    ].join('; '),
  };
}

/** Polls until no bucket is held by any of `gone` and every bucket has a holder; ms, or undefined. */
async function takeover(
  shards: ShardLeases,
  gone: readonly string[],
  from: number,
): Promise<{ ms: number | undefined; holders: BucketHolders }> {
  let last: BucketHolders = [];
  try {
    await pollUntil(
      async () => {
        last = await shards.holders();
        return last.every((holder) => holder !== undefined && !gone.includes(holder));
      },
      {
        timeoutMs: TAKEOVER_BOUND_MS + 20_000,
        intervalMs: 100,
        describe: `the buckets of ${gone.join(', ')} taken over`,
      },
    );
    return { ms: Date.now() - from, holders: last };
  } catch (error) {
    if (!(error instanceof PollTimeoutError)) throw error;
    return { ms: undefined, holders: last };
  }
}

function takeoverCheck(what: string, ms: number | undefined): FaultCheck {
  return {
    name: `${what} taken over ≤ lease duration + 5 s`,
    passed: ms !== undefined && ms <= TAKEOVER_BOUND_MS,
    detail: ms === undefined ? 'not taken over' : `in ${seconds(ms)}`,
  };
}

/** Waits until `count` of the given namespaces' workloads have an acknowledged write; false on timeout. */
async function rolledAtLeast(
  ctx: FaultContext,
  offset: number,
  namespaces: readonly string[],
  count: number,
): Promise<boolean> {
  try {
    await pollUntil(async () => (await writesByWorkload(ctx, offset, namespaces)).size >= count, {
      timeoutMs: 30_000,
      intervalMs: 50,
      describe: `${String(count)} workloads written`,
    });
    return true;
  } catch (error) {
    if (!(error instanceof PollTimeoutError)) throw error;
    return false;
  }
}

function pick<T>(items: readonly T[], random: () => number): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('nothing to pick from');
  return item;
}

/**
 * SIGKILL to one of three members as soon as a seeded number of the workloads of its namespaces
 * were written, i.e. in the middle of its share of the fan-out. It comes back as a new pod (a new
 * member); its buckets must be taken over when its Leases expire.
 */
export async function killShardMember(ctx: FaultContext): Promise<FaultEvidence> {
  const shards = shardsOf(ctx);
  const holders = await shards.settledOver(ctx.replicas.pods, SETTLE_TIMEOUT_MS);
  const owning = ctx.replicas.pods.filter(
    (pod) => namespacesOf(holders, pod, ctx.namespaces).length > 0,
  );
  const victim = pick(owning, ctx.random);
  const victimNamespaces = namespacesOf(holders, victim, ctx.namespaces);
  const victimBuckets = holders.filter((holder) => holder === victim).length;
  const workloads = victimNamespaces.length * ctx.fleetSize;
  const target = 1 + Math.floor(ctx.random() * Math.max(1, workloads - 1));
  const offset = await ctx.audit.mark();
  const changedAt = Date.now();
  await ctx.changeSource();
  const reached = await rolledAtLeast(ctx, offset, victimNamespaces, target);
  const replica = ctx.replicas.running.find((each) => ctx.replicas.podOf(each) === victim);
  const killedAt = Date.now();
  await ctx.replicas.kill9(replica);
  const killDoneAt = Date.now();
  const taken = await takeover(shards, [victim], killedAt);
  await ctx.replicas.allRunning();
  return {
    injected: 1,
    note: `${victim} (${String(victimBuckets)}/${String(SHARD_BUCKETS)} buckets, ${String(victimNamespaces.length)}/${String(ctx.namespaces.length)} namespaces) killed ${seconds(killedAt - changedAt)} after the change; its buckets taken over in ${taken.ms === undefined ? 'never' : seconds(taken.ms)}`,
    verify: async () => {
      const writes = await writesByWorkload(ctx, offset, victimNamespaces);
      // The survivors write only after the takeover: a write a second after the kill is theirs.
      const after = [...writes.values()].filter((times) =>
        times.some((time) => time > killedAt + 1000),
      ).length;
      const before = [...writes.values()].filter((times) =>
        times.some((time) => time <= killedAt),
      ).length;
      return [
        {
          name: 'kill landed mid fan-out',
          passed: reached && after > 0 && before > 0,
          detail: `of the killed member's ${String(workloads)} workloads ${String(before)} written before the kill, ${String(after)} after it by the others`,
        },
        takeoverCheck("the killed member's buckets", taken.ms),
        await onePatchEach(ctx, offset, [killDoneAt]),
      ];
    },
  };
}

/**
 * 3 → 5 → 2 around the change: two members join at a seeded moment of the fan-out; once the
 * buckets settled over the five, three of them (seeded, each SIGKILL or SIGTERM by seed) leave
 * at seeded moments and are not replaced. Measures the share of buckets and namespaces that moved
 * on 3 → 5 and the takeover of the leavers' buckets.
 */
export async function scaleShardMembers(ctx: FaultContext): Promise<FaultEvidence> {
  const shards = shardsOf(ctx);
  const first = ctx.replicas.pods;
  if (first.length !== SCALE_FROM)
    throw new Error(`shard-scale starts from ${String(SCALE_FROM)} replicas`);
  const before = await shards.settledOver(first, SETTLE_TIMEOUT_MS);
  const total = ctx.namespaces.length * ctx.fleetSize;
  const joinAfter = 1 + Math.floor(ctx.random() * Math.max(1, total / 2));
  const offset = await ctx.audit.mark();
  const changedAt = Date.now();
  const since = (at: number): string => `+${seconds(at - changedAt)}`;
  await ctx.changeSource();
  await rolledAtLeast(ctx, offset, ctx.namespaces, joinAfter);
  const joinStartAt = Date.now();
  const rolledAtJoin = (await writesByWorkload(ctx, offset, ctx.namespaces)).size;
  const joined = await ctx.replicas.add(SCALE_UP_BY);
  const five = [...first, ...joined];
  const after = await shards.settledOver(five, SETTLE_TIMEOUT_MS);
  const settledAt = Date.now();
  const moved = movement(before, after, joined, ctx.namespaces);
  // Three of the five leave, each killed or stopped by seed, within a seeded second of each other.
  const leaving: string[] = [];
  const remaining = [...five];
  for (let index = 0; index < SCALE_DOWN_BY; index += 1) {
    const pod = pick(remaining, ctx.random);
    remaining.splice(remaining.indexOf(pod), 1);
    leaving.push(pod);
  }
  const plan = leaving.map((pod, index) => ({
    pod,
    // The first two: one of each; the third by seed.
    how: index === 0 ? 'kill' : index === 1 ? 'stop' : ctx.random() < 0.5 ? 'kill' : 'stop',
    delayMs: Math.round(ctx.random() * 1000),
  })) satisfies { pod: string; how: 'kill' | 'stop'; delayMs: number }[];
  const rolledAtLeave = (await writesByWorkload(ctx, offset, ctx.namespaces)).size;
  const leaveAt = Date.now();
  const kills: number[] = [];
  await Promise.all(
    plan.map(async ({ pod, how, delayMs }) => {
      await sleep(delayMs);
      await ctx.replicas.retire(pod, how);
      if (how === 'kill') kills.push(Date.now());
    }),
  );
  const lastLeftAt = Date.now();
  const taken = await takeover(shards, leaving, leaveAt);
  const share = moved.buckets / SHARD_BUCKETS;
  return {
    injected: SCALE_UP_BY + SCALE_DOWN_BY,
    note: [
      `${joined.join(', ')} started ${since(joinStartAt)} (${String(rolledAtJoin)}/${String(total)} workloads written), buckets settled over 5 ${since(settledAt)}`,
      `moved ${String(moved.buckets)}/${String(SHARD_BUCKETS)} buckets, ${String(moved.namespaces)}/${String(ctx.namespaces.length)} namespaces`,
      `${plan.map(({ pod, how }) => `${pod} ${how === 'kill' ? 'SIGKILL' : 'SIGTERM'}`).join(', ')} from ${since(leaveAt)} to ${since(lastLeftAt)} (${String(rolledAtLeave)}/${String(total)} written)`,
      `their buckets held by the 2 left after ${taken.ms === undefined ? 'never' : seconds(taken.ms)}`,
    ].join('; '),
    verify: async () => [
      {
        name: '3 → 5 moved buckets only to the new members',
        passed: moved.toOldMembers === 0,
        detail: `${String(moved.toOldMembers)} of ${String(moved.buckets)} moved buckets went to an old member`,
      },
      {
        name: '3 → 5 moved ≤ 2/5 of the namespaces',
        passed: share <= MAX_MOVED_SHARE,
        detail: `${String(moved.buckets)}/${String(SHARD_BUCKETS)} buckets (${(share * 100).toFixed(0)}% of any namespaces), ${String(moved.namespaces)}/${String(ctx.namespaces.length)} of the fleet's`,
      },
      takeoverCheck("the leavers' buckets", taken.ms),
      await onePatchEach(ctx, offset, kills),
    ],
  };
}
