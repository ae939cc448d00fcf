import { describe, expect, it } from 'vitest';
import { LeadershipGate } from './leadership-gate.ts';

function gate(lease: { fresh: boolean } | undefined) {
  const changes: boolean[] = [];
  const subject = new LeadershipGate({
    lease: lease && { canWrite: () => lease.fresh },
    onLeadingChanged: (leading) => changes.push(leading),
  });
  return { gate: subject, changes };
}

describe('LeadershipGate', () => {
  it('without HA leads from the start and writes until the drain steps it down', () => {
    const t = gate(undefined);
    expect([t.gate.leading, t.gate.mayWrite()]).toEqual([true, true]);
    expect(t.gate.lead()).toBe(true);
    t.gate.beginShutdown();
    expect([t.gate.shuttingDown, t.gate.mayWrite()]).toEqual([true, true]);
    t.gate.stepDown();
    expect([t.gate.leading, t.gate.mayWrite()]).toEqual([false, false]);
    expect(t.changes).toEqual([false]);
  });

  it('with HA writes only while leading and while the Lease is fresh', () => {
    const lease = { fresh: true };
    const t = gate(lease);
    expect([t.gate.leading, t.gate.mayWrite()]).toEqual([false, false]);
    t.gate.lead();
    expect(t.gate.mayWrite()).toBe(true);
    lease.fresh = false;
    expect([t.gate.leading, t.gate.mayWrite()]).toEqual([true, false]);
    lease.fresh = true;
    t.gate.stepDown();
    expect(t.gate.mayWrite()).toBe(false);
    expect(t.changes).toEqual([true, false]);
  });

  it('acquires nothing once shutdown has begun', () => {
    const t = gate({ fresh: true });
    t.gate.beginShutdown();
    expect(t.gate.lead()).toBe(false);
    expect([t.gate.leading, t.gate.mayWrite()]).toEqual([false, false]);
    expect(t.changes).toEqual([]);
  });
});
