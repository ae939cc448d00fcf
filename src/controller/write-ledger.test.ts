import { describe, expect, it } from 'vitest';
import type { WorkloadKey } from '../core/types.ts';
import { WriteLedger } from './write-ledger.ts';

const KEY: WorkloadKey = 'Deployment/ns/api';
const OTHER: WorkloadKey = 'Deployment/ns/web';

describe('WriteLedger: the echoes of kreload’s own patches', () => {
  it.each([
    ['the exact echo', '10', '11', true],
    ['a change from the patched version on (another writer)', '11', '12', false],
    ['a change that skipped the patched version (coalesced)', '10', '12', false],
    ['a change onto the precondition version', '9', '10', false],
  ])('%s: %s → %s is an echo: %s', (_name, from, to, echo) => {
    const ledger = new WriteLedger();
    ledger.recordPatch(KEY, { from: '10', to: '11' });
    expect(ledger.isOwnEcho(KEY, from, to)).toBe(echo);
    expect(ledger.isOwnEcho(OTHER, from, to)).toBe(false);
  });

  it('an echo matches once, and the basis survives the patches', () => {
    const ledger = new WriteLedger();
    ledger.record(KEY, 5);
    ledger.recordPatch(KEY, { from: '10', to: '11' });
    ledger.recordPatch(KEY, { from: '11', to: '12' });
    expect(ledger.isOwnEcho(KEY, '11', '12')).toBe(true);
    expect(ledger.isOwnEcho(KEY, '11', '12')).toBe(false);
    // consumed with the newer one: its event was coalesced into it
    expect(ledger.isOwnEcho(KEY, '10', '11')).toBe(false);
    expect(ledger.basis(KEY)).toBe(5);
    ledger.forget(KEY);
    expect(ledger.basis(KEY)).toBeUndefined();
  });
});
