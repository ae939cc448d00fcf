/**
 * Restart windows and the flapping-source breaker through kreload's real parts, wired by
 * src/app/pipeline.ts as in safe-rollout.test.ts. The in-memory API server records every PATCH;
 * a restart is a second pipeline built on what the server holds. Fake timers.
 */
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HoldSettings } from '../app/pipeline.ts';
import { workloadKey } from '../core/keys.ts';
import type { WorkloadRef, WorkloadView } from '../core/types.ts';
import {
  BASELINE,
  DEFAULT_ANNOTATION_KEYS as KEYS,
  PENDING_ROLL,
  RESTART_WINDOW,
} from '../core/types.ts';
import { createLogger } from '../log/logger.ts';
import { aContainer, aSecret, aWorkload } from '../testing/builders.ts';
import {
  InMemoryCluster,
  annotationsOf,
  isRoll,
  startPipeline,
} from '../testing/in-memory-cluster.ts';

const NS = 'team-a';
const API: WorkloadRef = { kind: 'Deployment', namespace: NS, name: 'api' };
const START = Date.parse('2026-06-01T00:10:00Z');
const SYNC_DELAY_MS = 1_000;
const hash = (digit: number): string => String(digit).repeat(40);
/** Rolls may start from 00:30 to 00:40 UTC. */
const WINDOW = '{"timezone":"UTC","windows":[{"cron":"30 0 * * *","duration":"10m"}]}';
const OPENS = Date.parse('2026-06-01T00:30:00Z');
const WINDOWS_ON: HoldSettings = {
  windowsEnabled: true,
  flapLimits: { maxChanges: 0, periodMs: 60_000, coolDownMs: 20_000 },
};
const BREAKER: HoldSettings = {
  windowsEnabled: false,
  flapLimits: { maxChanges: 3, periodMs: 60_000, coolDownMs: 20_000 },
};

/** The `STAKATER_*` env vars of container `app` as the server holds them. */
function envOf(server: InMemoryCluster): Readonly<Record<string, string>> | undefined {
  return server.api.server(API)?.podSpec.containers[0]?.stakaterEnv;
}

/** A Deployment of container `app` using Secrets db and tls, both baselined at hash 1. */
function api(annotations: Record<string, string> = {}): WorkloadView {
  let builder = aWorkload('Deployment', NS, 'api')
    .withResourceVersion('10')
    .withGeneration(1)
    .withAnnotation(KEYS.auto, 'true')
    .withAnnotation(BASELINE, `{"secret/db":"${hash(1)}","secret/tls":"${hash(1)}"}`)
    .withContainer(aContainer('app').withEnvFrom('secret', 'db').withEnvFrom('secret', 'tls'));
  for (const [key, value] of Object.entries(annotations))
    builder = builder.withAnnotation(key, value);
  return builder.build();
}

/** One kreload process on `server`, with the Secrets at these hashes. */
function kreload(server: InMemoryCluster, holds: HoldSettings, secrets: Record<string, string>) {
  const logLines: string[] = [];
  const { queue, watched, events, sample } = startPipeline(server, {
    sourceTypes: ['SECRET'],
    debounce: { syncDelayMs: SYNC_DELAY_MS, syncMaxDelayMs: 30_000 },
    holds,
    logger: createLogger({
      level: 'info',
      format: 'json',
      stream: new Writable({
        write: (chunk: Buffer, _encoding, done) => {
          logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
          done();
        },
      }),
    }),
  });
  const secret = (name: string, value: string) =>
    aSecret(NS, name).withHash(value).withUid(`${name}-uid`).build();
  watched.byType.SECRET?.replace(
    Object.entries(secrets).map(([name, value]) => secret(name, value)),
  );
  const view = server.api.server(API);
  watched.store.replace('Deployment', view ? [view] : []);
  queue.start();
  // The start-up resync reconciles every workload.
  queue.trigger(workloadKey(API), { debounced: false });
  return {
    events,
    counter: sample,
    /** The messages of the info-and-above lines logged so far. */
    messages: () => logLines.map((line) => (JSON.parse(line) as { msg: string }).msg),
    stop: () => {
      queue.stop();
    },
    editSecret: (name: string, value: string) => watched.byType.SECRET?.upsert(secret(name, value)),
  };
}

const advance = (ms: number): Promise<void> =>
  vi.advanceTimersByTimeAsync(ms).then(() => undefined);

beforeEach(() => {
  vi.useFakeTimers({ now: START });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('a restart window', () => {
  it('holds changes outside it durably; after a restart, one roll at its opening covers both', async () => {
    const server = new InMemoryCluster();
    server.api.put(api({ [RESTART_WINDOW]: WINDOW }));
    const first = kreload(server, WINDOWS_ON, { db: hash(1), tls: hash(1) });
    await advance(100);
    first.editSecret('db', hash(2));
    await advance(SYNC_DELAY_MS + 100);
    first.editSecret('tls', hash(3));
    await advance(SYNC_DELAY_MS + 100);
    expect(server.sent.filter(isRoll)).toEqual([]);
    expect(server.sent.map((write) => annotationsOf(write)[PENDING_ROLL])).toEqual([
      `{"secret/db":"${hash(2)}"}`,
      `{"secret/db":"${hash(2)}","secret/tls":"${hash(3)}"}`,
    ]);
    expect(await first.counter('kreload_rollouts_held_total', { reason: 'window' })).toBe(2);
    // kill -9: the process and its memory are gone; the server keeps what was written.
    first.stop();
    const sentBeforeRestart = server.sent.length;
    kreload(server, WINDOWS_ON, { db: hash(2), tls: hash(3) });
    await advance(OPENS - Date.now() - 1_000);
    expect(server.sent.slice(sentBeforeRestart)).toEqual([]);
    await advance(2_000);
    const after = server.sent.slice(sentBeforeRestart);
    expect(after.filter(isRoll)).toHaveLength(1);
    expect(after).toHaveLength(1);
    const roll = after[0];
    expect(roll && annotationsOf(roll)[PENDING_ROLL]).toBeNull();
    expect(envOf(server)).toEqual({ STAKATER_DB_SECRET: hash(2), STAKATER_TLS_SECRET: hash(3) });
  });

  it('without --enable-restart-windows a workload with a window is held (fails closed)', async () => {
    const server = new InMemoryCluster();
    server.api.put(api({ [RESTART_WINDOW]: WINDOW }));
    const c = kreload(
      server,
      { ...WINDOWS_ON, windowsEnabled: false },
      { db: hash(1), tls: hash(1) },
    );
    await advance(100);
    c.editSecret('db', hash(2));
    await advance(OPENS - Date.now() + 60_000);
    expect(server.sent.filter(isRoll)).toEqual([]);
    expect(
      await c.counter('kreload_rollouts_held_total', { reason: 'windows_off' }),
    ).toBeGreaterThan(0);
  });
});

describe('the flapping-source breaker', () => {
  it('a Secret rewritten every 500 ms: no roll while it flaps, one Event, one roll after the cool-down', async () => {
    const server = new InMemoryCluster();
    server.api.put(api());
    const c = kreload(server, BREAKER, { db: hash(1), tls: hash(1) });
    await advance(100);
    const last = 40;
    for (let i = 2; i <= last; i += 1) {
      c.editSecret('db', String(i % 10).repeat(39) + String(i % 7));
      await advance(500);
    }
    expect(server.sent.filter(isRoll)).toEqual([]);
    await advance(BREAKER.flapLimits.coolDownMs - 1_000);
    expect(server.sent.filter(isRoll)).toEqual([]);
    await advance(2_000);
    const rolls = server.sent.filter(isRoll);
    expect(rolls).toHaveLength(1);
    expect(envOf(server)).toEqual({
      STAKATER_DB_SECRET: String(last % 10).repeat(39) + String(last % 7),
    });
    const flapping = c.events.filter((event) => event.reason === 'SourceFlapping');
    expect(
      flapping.map((event) => `${event.type} ${event.object.kind}/${event.object.name}`),
    ).toEqual(['Warning Secret/db']);
    expect(await c.counter('kreload_source_flapping_episodes_total')).toBe(1);
    expect(await c.counter('kreload_rollouts_held_total', { reason: 'flapping' })).toBeGreaterThan(
      0,
    );
  });

  it('a source held flapping: pending-roll is written once, not at each further change', async () => {
    const server = new InMemoryCluster();
    server.api.put(api());
    const c = kreload(server, BREAKER, { db: hash(1), tls: hash(1) });
    await advance(100);
    const value = (i: number) => String(i % 10).repeat(39) + String(i % 7);
    // Each change outlives --sync-delay, so each one is planned and meets the open breaker.
    for (let i = 2; i <= 21; i += 1) {
      c.editSecret('db', value(i));
      await advance(SYNC_DELAY_MS + 500);
    }
    const rollsWhileClosed = server.sent.filter(isRoll).length;
    expect(rollsWhileClosed).toBeLessThanOrEqual(BREAKER.flapLimits.maxChanges);
    const pendingWrites = server.sent.filter(
      (write) => !isRoll(write) && annotationsOf(write)[PENDING_ROLL] !== undefined,
    );
    expect(pendingWrites).toHaveLength(1);
    // One info line when the hold begins, not one per reconcile that keeps it.
    expect(c.messages().filter((message) => message === 'roll held')).toHaveLength(1);
    await advance(BREAKER.flapLimits.coolDownMs + 1_000);
    expect(server.sent.filter(isRoll)).toHaveLength(rollsWhileClosed + 1);
    expect(envOf(server)).toEqual({ STAKATER_DB_SECRET: value(21) });
    expect(server.api.server(API)?.annotations[PENDING_ROLL]).toBeUndefined();
  });
});

describe('per-workload settings', () => {
  it('a bad restart window: one InvalidAnnotation Event on the workload, held, nothing rolled', async () => {
    const server = new InMemoryCluster();
    const bad = '{"timezone":"Mars/Olympus","windows":[{"cron":"30 0 * * *","duration":"10m"}]}';
    server.api.put(api({ [RESTART_WINDOW]: bad }));
    const c = kreload(server, WINDOWS_ON, { db: hash(1), tls: hash(1) });
    await advance(100);
    c.editSecret('db', hash(2));
    await advance(SYNC_DELAY_MS + 100);
    c.editSecret('db', hash(3));
    await advance(SYNC_DELAY_MS + 100);
    expect(server.sent.filter(isRoll)).toEqual([]);
    const invalid = c.events.filter((event) => event.reason === 'InvalidAnnotation');
    expect(
      invalid.map(
        (event) => `${event.type} ${event.object.kind}/${event.object.name}: ${event.message}`,
      ),
    ).toEqual([
      `Warning Deployment/api: ${RESTART_WINDOW}: invalid restart window: unknown time zone "Mars/Olympus"; its rolls are held until it is fixed or removed`,
    ]);
    expect(await c.counter('kreload_rollouts_held_total', { reason: 'window_invalid' })).toBe(2);
  });

  it("the workload's kreload.io/flap-* annotations turn its breaker on with its own limits", async () => {
    const server = new InMemoryCluster();
    server.api.put(api({ 'kreload.io/flap-max-changes': '3', 'kreload.io/flap-cool-down': '20s' }));
    const off = { ...BREAKER, flapLimits: { ...BREAKER.flapLimits, maxChanges: 0 } };
    const c = kreload(server, off, { db: hash(1), tls: hash(1) });
    await advance(100);
    const last = 20;
    for (let i = 2; i <= last; i += 1) {
      c.editSecret('db', String(i % 10).repeat(39) + String(i % 7));
      await advance(500);
    }
    // The first changes roll (within the limit); then the breaker holds until 20 s of quiet.
    const during = server.sent.filter(isRoll).length;
    expect(during).toBeLessThanOrEqual(3);
    await advance(19_000);
    expect(server.sent.filter(isRoll)).toHaveLength(during);
    await advance(2_000);
    expect(server.sent.filter(isRoll)).toHaveLength(during + 1);
    expect(envOf(server)).toMatchObject({
      STAKATER_DB_SECRET: String(last % 10).repeat(39) + String(last % 7),
    });
    expect(c.events.filter((event) => event.reason === 'SourceFlapping')).toHaveLength(1);
  });

  it('a flap period past 2^31 ms is an InvalidAnnotation and reads as the flag', async () => {
    const server = new InMemoryCluster();
    server.api.put(api({ 'kreload.io/flap-period': '600h' }));
    const c = kreload(server, BREAKER, { db: hash(1), tls: hash(1) });
    await advance(100);
    c.editSecret('db', hash(2));
    await advance(SYNC_DELAY_MS + 100);
    expect(server.sent.filter(isRoll)).toHaveLength(1);
    expect(
      c.events.filter((event) => event.reason === 'InvalidAnnotation').map((e) => e.message),
    ).toEqual([
      'kreload.io/flap-period: duration 600h is out of range 1s–24h; read as --flap-period',
    ]);
  });
});
