import { describe, expect, it } from 'vitest';
import type { WorkloadKey, WorkloadRef } from '../core/types.ts';
import type { PatchResult, WorkloadWriter } from '../reconcile/ports.ts';
import type { Patch } from '../rollout/patch.ts';
import { recordingOwnPatches, WriteLedger } from './write-ledger.ts';

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

describe('recordingOwnPatches: an echo that comes before the PATCH answer', () => {
  const REF: WorkloadRef = { kind: 'Deployment', namespace: 'ns', name: 'api' };
  const PATCH: Patch = { type: 'strategic', body: { metadata: { resourceVersion: '10' } } };

  /** A writer whose one PATCH is answered (or refused) when the test says so. */
  function heldWriter(): { writer: WorkloadWriter; answer: (to: string | undefined) => void } {
    let settle: (to: string | undefined) => void = () => undefined;
    const refuse = (): never => {
      throw new Error('not used');
    };
    const writer: WorkloadWriter = {
      patch: () =>
        new Promise<PatchResult>((resolve, reject) => {
          settle = (to) => {
            if (to === undefined) reject(new Error('409'));
            else resolve({ generation: 2, resourceVersion: to });
          };
        }),
      get: refuse,
      getObject: refuse,
      create: refuse,
      delete: refuse,
      instantiate: refuse,
    };
    return {
      writer,
      answer: (to) => {
        settle(to);
      },
    };
  }

  it.each([
    ['answered with the echoed version', '11', true],
    ['answered with another version', '12', false],
    ['refused', undefined, false],
  ])('the patch %s (%s): the early echo 10 → 11 is its own: %s', async (_name, to, echo) => {
    const ledger = new WriteLedger();
    const held = heldWriter();
    const sent = recordingOwnPatches(held.writer, ledger).patch(REF, PATCH);
    const verdict = ledger.isOwnEcho(KEY, '10', '11');
    expect(ledger.isOwnEcho(OTHER, '10', '11')).toBe(false);
    held.answer(to);
    await sent.catch(() => undefined);
    expect(await verdict).toBe(echo);
    // consumed: the same change seen again is not an echo
    expect(await ledger.isOwnEcho(KEY, '10', '11')).toBe(false);
  });
});
