import { describe, expect, it } from 'vitest';
import { TrackingTally } from './tracking-tally.ts';

function recordingGauges() {
  const sources = new Map<string, number>();
  const workloads = new Map<string, number>();
  return {
    sources,
    workloads,
    gauges: {
      setTrackedSources: (type: string, n: number) => sources.set(type, n),
      setTrackedWorkloads: (kind: string, n: number) => workloads.set(kind, n),
    },
  };
}

describe('TrackingTally', () => {
  it('counts distinct sources per type and workloads per kind', () => {
    const g = recordingGauges();
    const tally = new TrackingTally({ gauges: g.gauges });
    tally.record('Deployment/a/api', ['configmap/cfg', 'secret/db']);
    tally.record('StatefulSet/a/db', ['secret/db']);
    tally.record('Deployment/b/api', ['configmap/cfg']);
    expect(Object.fromEntries(g.sources)).toEqual({
      CONFIGMAP: 2,
      SECRET: 1,
      SECRETPROVIDERCLASS: 0,
    });
    expect(Object.fromEntries(g.workloads)).toEqual({ Deployment: 2, StatefulSet: 1 });
  });

  it('a reconcile that finds the same list sets no gauge', () => {
    let sets = 0;
    const tally = new TrackingTally({
      gauges: {
        setTrackedSources: () => (sets += 1),
        setTrackedWorkloads: () => (sets += 1),
      },
    });
    tally.record('Deployment/a/api', ['configmap/cfg', 'secret/db']);
    sets = 0;
    tally.record('Deployment/a/api', ['configmap/cfg', 'secret/db']);
    expect(sets).toBe(0);
    tally.record('Deployment/a/api', ['configmap/cfg']);
    expect(sets).toBeGreaterThan(0);
  });

  it('forgets workloads that stop tracking or disappear', () => {
    const g = recordingGauges();
    const tally = new TrackingTally({ gauges: g.gauges });
    tally.record('Deployment/a/api', ['configmap/cfg']);
    tally.record('Deployment/a/web', ['configmap/cfg']);
    tally.record('Deployment/a/api', []);
    tally.forget('Deployment/a/web');
    expect(g.sources.get('CONFIGMAP')).toBe(0);
    expect(g.workloads.get('Deployment')).toBe(0);
  });

  it('keeps counting a source while any workload still references it', () => {
    const g = recordingGauges();
    const tally = new TrackingTally({ gauges: g.gauges });
    tally.record('Deployment/a/api', ['configmap/cfg', 'configmap/cfg', 'secret/db']);
    tally.record('Deployment/a/web', ['configmap/cfg']);
    tally.record('Deployment/a/api', ['secret/db']); // stops tracking cfg; web still does
    expect(g.sources.get('CONFIGMAP')).toBe(1);
    tally.record('Deployment/a/web', ['secret/other']);
    expect(Object.fromEntries(g.sources)).toEqual({
      CONFIGMAP: 0,
      SECRET: 2,
      SECRETPROVIDERCLASS: 0,
    });
    tally.forget('Deployment/a/api');
    tally.forget('Deployment/a/api'); // twice: no double count
    expect(g.sources.get('SECRET')).toBe(1);
    expect(g.workloads.get('Deployment')).toBe(1);
  });
});
