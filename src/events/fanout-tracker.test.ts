import { describe, expect, it } from 'vitest';
import type { SourceRef, WorkloadRef } from '../core/types.ts';
import type { EventRequest } from './event-recorder.ts';
import { FanoutTracker } from './fanout-tracker.ts';

const SOURCE: SourceRef = { type: 'CONFIGMAP', namespace: 'team-a', name: 'app-config' };
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'f83e99e3e1a1b6b1e0d5d3a5e1a8a5c7b6d8646a';
const API: WorkloadRef = { kind: 'Deployment', namespace: 'team-a', name: 'api' };
const DB: WorkloadRef = { kind: 'StatefulSet', namespace: 'team-a', name: 'db' };
const WEB: WorkloadRef = { kind: 'Deployment', namespace: 'team-a', name: 'web' };

function setup(maxOpenMs?: number) {
  let now = 0;
  const recorded: EventRequest[] = [];
  const tracker = new FanoutTracker({
    events: { record: (request) => recorded.push(request) },
    clock: { now: () => now },
    maxOpenMs,
  });
  return {
    tracker,
    recorded,
    messages: () => recorded.map((r) => r.message),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('FanoutTracker', () => {
  it('writes WorkloadsReloaded on the source once, when the last workload finishes', () => {
    const { tracker, recorded } = setup();
    tracker.begin({ source: SOURCE, uid: 'cm-uid', hash: H1, workloads: [API, DB, WEB] });
    tracker.finish({ source: SOURCE, hash: H1, workload: DB, outcome: 'rolled' });
    tracker.finish({ source: SOURCE, hash: H1, workload: API, outcome: 'rolled' });
    expect(recorded).toEqual([]);
    tracker.finish({ source: SOURCE, hash: H1, workload: WEB, outcome: 'skipped' });
    tracker.finish({ source: SOURCE, hash: H1, workload: WEB, outcome: 'rolled' });
    expect(recorded).toEqual([
      {
        object: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          namespace: 'team-a',
          name: 'app-config',
          uid: 'cm-uid',
        },
        reason: 'WorkloadsReloaded',
        type: 'Normal',
        message:
          "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 2 workload(s): Deployment/api, StatefulSet/db",
      },
    ]);
    expect(tracker.openCount).toBe(0);
  });

  it('counts failures', () => {
    const { tracker, messages } = setup();
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API, DB] });
    tracker.finish({ source: SOURCE, hash: H1, workload: API, outcome: 'failed' });
    tracker.finish({ source: SOURCE, hash: H1, workload: DB, outcome: 'rolled' });
    expect(messages()).toEqual([
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 1 workload(s): StatefulSet/db; 1 failed",
    ]);
  });

  it('writes nothing when no workload rolled or failed', () => {
    const { tracker, recorded } = setup();
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API, DB] });
    tracker.finish({ source: SOURCE, hash: H1, workload: API, outcome: 'skipped' });
    tracker.finish({ source: SOURCE, hash: H1, workload: DB, outcome: 'skipped' });
    expect(recorded).toEqual([]);
    expect(tracker.openCount).toBe(0);
  });

  it('ignores a change fanned out to no workload', () => {
    const { tracker, recorded } = setup();
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [] });
    expect(tracker.openCount).toBe(0);
    expect(recorded).toEqual([]);
  });

  it('ignores finishes for another hash, another source or an unknown workload', () => {
    const { tracker, recorded } = setup();
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API] });
    tracker.finish({ source: SOURCE, hash: H2, workload: API, outcome: 'rolled' });
    tracker.finish({
      source: { ...SOURCE, type: 'SECRET' },
      hash: H1,
      workload: API,
      outcome: 'rolled',
    });
    tracker.finish({
      source: { ...SOURCE, namespace: 'team-b' },
      hash: H1,
      workload: API,
      outcome: 'rolled',
    });
    tracker.finish({ source: SOURCE, hash: H1, workload: DB, outcome: 'rolled' });
    expect(recorded).toEqual([]);
    expect(tracker.openCount).toBe(1);
  });

  it('closes an older change with what had finished when a newer one begins', () => {
    const { tracker, messages } = setup();
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API, DB] });
    tracker.finish({ source: SOURCE, hash: H1, workload: API, outcome: 'rolled' });
    tracker.begin({ source: SOURCE, uid: 'u', hash: H2, workloads: [API, DB] });
    expect(messages()).toEqual([
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 1 workload(s): Deployment/api",
    ]);
    tracker.finish({ source: SOURCE, hash: H2, workload: API, outcome: 'rolled' });
    tracker.finish({ source: SOURCE, hash: H2, workload: DB, outcome: 'rolled' });
    expect(messages()).toHaveLength(2);
    expect(messages()[1]).toBe(
      "Change to ConfigMap 'app-config' (hash f83e99e3e1a1) rolled 2 workload(s): Deployment/api, StatefulSet/db",
    );
  });

  it('adds workloads to an open change of the same hash without re-opening finished ones', () => {
    const { tracker, messages } = setup();
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API, DB] });
    tracker.finish({ source: SOURCE, hash: H1, workload: API, outcome: 'rolled' });
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API, WEB] });
    tracker.finish({ source: SOURCE, hash: H1, workload: DB, outcome: 'rolled' });
    expect(messages()).toEqual([]);
    tracker.finish({ source: SOURCE, hash: H1, workload: WEB, outcome: 'rolled' });
    expect(messages()).toEqual([
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 3 workload(s): Deployment/api, Deployment/web, StatefulSet/db",
    ]);
  });

  it('opens a new fan-out when a closed hash comes back (A → B → A)', () => {
    const { tracker, messages } = setup();
    for (let round = 0; round < 2; round += 1) {
      tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API, DB] });
      tracker.finish({ source: SOURCE, hash: H1, workload: API, outcome: 'rolled' });
      tracker.finish({ source: SOURCE, hash: H1, workload: DB, outcome: 'rolled' });
    }
    expect(messages()).toHaveLength(2);
  });

  it("writes nothing for a change whose one workload rolled: that workload's Reloaded says it", () => {
    const { tracker, recorded } = setup();
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API] });
    tracker.finish({ source: SOURCE, hash: H1, workload: API, outcome: 'rolled' });
    expect(recorded).toEqual([]);
    expect(tracker.openCount).toBe(0);
  });

  it('still writes the summary of a change whose one workload failed', () => {
    const { tracker, messages } = setup();
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API] });
    tracker.finish({ source: SOURCE, hash: H1, workload: API, outcome: 'failed' });
    expect(messages()).toEqual([
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 0 workload(s); 1 failed",
    ]);
  });

  it('closes a fan-out that stays open too long with what had finished', () => {
    const { tracker, messages, advance } = setup(60_000);
    tracker.begin({ source: SOURCE, uid: 'u', hash: H1, workloads: [API, DB] });
    tracker.finish({ source: SOURCE, hash: H1, workload: API, outcome: 'rolled' });
    advance(59_999);
    tracker.sweep();
    expect(messages()).toEqual([]);
    advance(1);
    tracker.sweep();
    expect(messages()).toEqual([
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 1 workload(s): Deployment/api",
    ]);
    expect(tracker.openCount).toBe(0);
  });
});
