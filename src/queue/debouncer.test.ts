import { describe, expect, it } from 'vitest';
import {
  applyTrigger,
  CHANGES_PER_CATCH_UP,
  Debouncer,
  laneOf,
  mergeChanges,
  type ChangeRecord,
  type Lane,
  type PendingEntry,
} from './debouncer.ts';

const settings = { syncDelayMs: 2_000, syncMaxDelayMs: 30_000 };
const cm = (observedAt: number): ChangeRecord => ({ sourceKey: 'configmap/app', observedAt });
const secret = (observedAt: number): ChangeRecord => ({ sourceKey: 'secret/db', observedAt });
const entry = (firstAt: number, dueAt: number, changes: ChangeRecord[] = []): PendingEntry => ({
  firstAt,
  dueAt,
  changes,
});

describe('applyTrigger (§8 items 2 and 3)', () => {
  it.each([
    // debounced, not pending: firstAt = t, dueAt = t + syncDelay
    ['debounced, new', undefined, 100, true, entry(100, 2_100), 'added'],
    // debounced, pending: dueAt = min(max(dueAt, t + d), firstAt + max)
    ['debounced, pushes window', entry(0, 2_000), 1_500, true, entry(0, 3_500), 'coalesced'],
    ['debounced, capped', entry(0, 29_000), 29_500, true, entry(0, 30_000), 'coalesced'],
    ['debounced, past the cap', entry(0, 30_000), 45_000, true, entry(0, 30_000), 'coalesced'],
    [
      'debounced, earlier t keeps dueAt',
      entry(0, 5_000),
      1_000,
      true,
      entry(0, 5_000),
      'coalesced',
    ],
    // immediate, not pending: firstAt = dueAt = t
    ['immediate, new', undefined, 700, false, entry(700, 700), 'added'],
    // immediate, pending: unchanged (never cuts a window short)
    ['immediate, pending', entry(0, 2_000), 500, false, entry(0, 2_000), 'unchanged'],
  ] as const)('%s', (_name, before, at, debounced, expected, outcome) => {
    expect(applyTrigger(before, { at, debounced }, settings)).toEqual({
      entry: expected,
      outcome,
    });
  });

  it.each([
    ['its own delay, new', undefined, 100, 5_000, entry(100, 5_100), 'added'],
    ['its own delay, pending', entry(0, 2_000), 1_000, 5_000, entry(0, 6_000), 'coalesced'],
    ['its own delay, capped by sync-max-delay', undefined, 0, 3_600_000, entry(0, 30_000), 'added'],
  ] as const)(
    'a workload %s (ReloadPolicy syncDelay)',
    (_name, before, at, syncDelayMs, expected, outcome) => {
      expect(applyTrigger(before, { at, debounced: true, syncDelayMs }, settings)).toEqual({
        entry: expected,
        outcome,
      });
    },
  );

  it('with sync-delay 0 a debounced trigger is due at once', () => {
    const zero = { syncDelayMs: 0, syncMaxDelayMs: 0 };
    expect(applyTrigger(undefined, { at: 9, debounced: true }, zero).entry).toEqual(entry(9, 9));
    expect(applyTrigger(entry(9, 9), { at: 12, debounced: true }, zero).entry).toEqual(entry(9, 9));
  });

  it('replays a burst exactly: one entry, due at min(last + d, first + max)', () => {
    let state: PendingEntry | undefined;
    const times = [0, 1_000, 2_500, 4_000, 5_900];
    for (const at of times) state = applyTrigger(state, { at, debounced: true }, settings).entry;
    expect(state).toEqual(entry(0, 7_900));
    const capped = { syncDelayMs: 2_000, syncMaxDelayMs: 5_000 };
    state = undefined;
    for (const at of times) state = applyTrigger(state, { at, debounced: true }, capped).entry;
    expect(state).toEqual(entry(0, 5_000));
  });

  it('keeps one change per source key, with the earliest observation', () => {
    let state = applyTrigger(
      undefined,
      { at: 10, debounced: true, change: cm(10) },
      settings,
    ).entry;
    state = applyTrigger(state, { at: 20, debounced: true, change: cm(20) }, settings).entry;
    state = applyTrigger(state, { at: 30, debounced: true, change: secret(30) }, settings).entry;
    state = applyTrigger(state, { at: 40, debounced: false, change: cm(5) }, settings).entry;
    expect(state.changes).toEqual([cm(5), secret(30)]);
  });
});

describe('mergeChanges', () => {
  it('keeps the earliest observation per key, in first-seen order', () => {
    expect(mergeChanges([cm(50)], [secret(10), cm(40), cm(60)])).toEqual([cm(40), secret(10)]);
  });
});

describe('Debouncer', () => {
  const create = (): Debouncer<string> => new Debouncer<string>({ settings });

  it('hands out due keys by dueAt, ties to firstAt, then first pending', () => {
    const debouncer = create();
    debouncer.trigger('late', { at: 0, debounced: true }); // due 2000
    debouncer.trigger('tie-later-first', { at: 500, debounced: false }); // due 500, first 500
    debouncer.trigger('now', { at: 100, debounced: false }); // due 100
    debouncer.trigger('tie-earlier-first', { at: 300, debounced: true }); // 300 → due 2300
    debouncer.trigger('tie-earlier-first', { at: 300, debounced: true });
    debouncer.trigger('fifo-a', { at: 500, debounced: false }); // same as tie-later-first
    expect(debouncer.nextDueAt()).toBe(100);
    const taken: string[] = [];
    for (let due = debouncer.takeDue(10_000); due; due = debouncer.takeDue(10_000)) {
      taken.push(due.key);
    }
    expect(taken).toEqual(['now', 'tie-later-first', 'fifo-a', 'late', 'tie-earlier-first']);
    expect(debouncer.size).toBe(0);
  });

  it('orders equal dueAt by the smaller firstAt', () => {
    const debouncer = new Debouncer<string>({
      settings: { syncDelayMs: 2_000, syncMaxDelayMs: 3_000 },
    });
    debouncer.trigger('b', { at: 1_000, debounced: true }); // due 3000, first 1000
    debouncer.trigger('a', { at: 0, debounced: true }); // due 2000
    debouncer.trigger('a', { at: 1_500, debounced: true }); // min(3500, 3000) = 3000, first 0
    expect(debouncer.takeDue(3_000)?.key).toBe('a');
    expect(debouncer.takeDue(3_000)?.key).toBe('b');
  });

  it('hands out nothing before it is due', () => {
    const debouncer = create();
    debouncer.trigger('k', { at: 0, debounced: true });
    expect(debouncer.takeDue(1_999)).toBeUndefined();
    expect(debouncer.takeDue(2_000)).toEqual({ key: 'k', entry: entry(0, 2_000) });
  });

  it('moves a coalesced key back in the order', () => {
    const debouncer = create();
    debouncer.trigger('a', { at: 0, debounced: true });
    debouncer.trigger('b', { at: 100, debounced: true });
    debouncer.trigger('a', { at: 1_000, debounced: true }); // a now due 3000
    expect(debouncer.takeDue(2_100)?.key).toBe('b');
    expect(debouncer.takeDue(2_999)).toBeUndefined();
    expect(debouncer.takeDue(3_000)?.key).toBe('a');
  });

  it('keeps held keys pending but out of reach until released', () => {
    const debouncer = create();
    debouncer.hold('a');
    debouncer.trigger('a', { at: 0, debounced: false });
    debouncer.trigger('b', { at: 10, debounced: false });
    expect(debouncer.nextDueAt()).toBe(10);
    expect(debouncer.takeDue(100)?.key).toBe('b');
    expect(debouncer.takeDue(100)).toBeUndefined();
    expect(debouncer.size).toBe(1);
    debouncer.trigger('a', { at: 50, debounced: true });
    expect(debouncer.isHeld('a')).toBe(true);
    debouncer.release('a');
    expect(debouncer.takeDue(2_049)).toBeUndefined();
    expect(debouncer.takeDue(2_050)).toEqual({ key: 'a', entry: entry(0, 2_050) });
  });

  it('requeues failed changes into a pending entry or a new one due now', () => {
    const debouncer = create();
    expect(debouncer.requeue('a', 500, [cm(1)])).toBe(true);
    expect(debouncer.get('a')).toEqual(entry(500, 500, [cm(1)]));
    debouncer.trigger('b', { at: 0, debounced: true, change: secret(0) });
    expect(debouncer.requeue('b', 700, [cm(2)])).toBe(false);
    expect(debouncer.get('b')).toEqual(entry(0, 2_000, [secret(0), cm(2)]));
  });

  it('drops single keys, by predicate, or everything', () => {
    const debouncer = create();
    for (const key of ['x/1', 'x/2', 'y/1']) debouncer.trigger(key, { at: 0, debounced: false });
    expect(debouncer.drop('x/1')).toBe(true);
    expect(debouncer.drop('x/1')).toBe(false);
    expect(debouncer.dropWhere((key) => key.startsWith('x/'))).toBe(1);
    expect(debouncer.keys()).toEqual(['y/1']);
    expect(debouncer.takeDue(0)?.key).toBe('y/1');
    debouncer.trigger('z', { at: 0, debounced: false });
    debouncer.clear();
    expect(debouncer.size).toBe(0);
    expect(debouncer.nextDueAt()).toBeUndefined();
  });

  it('takes entries with source changes first, one catch-up entry per three (ADR 0017)', () => {
    const debouncer = create();
    for (let i = 0; i < 5; i += 1)
      debouncer.trigger(`baseline-${String(i)}`, { at: i, debounced: false });
    for (let i = 0; i < 4; i += 1) {
      debouncer.trigger(`change-${String(i)}`, {
        at: 10 + i,
        debounced: false,
        change: cm(10 + i),
      });
    }
    // A change folded into a pending catch-up entry moves it to the change lane.
    debouncer.trigger('baseline-4', { at: 20, debounced: false, change: secret(20) });
    const taken: string[] = [];
    for (let due = debouncer.takeDue(100); due; due = debouncer.takeDue(100)) taken.push(due.key);
    expect(taken).toEqual([
      'baseline-4',
      'change-0',
      'change-1',
      'baseline-0',
      'change-2',
      'change-3',
      'baseline-1',
      'baseline-2',
      'baseline-3',
    ]);
  });

  it('a dropped and re-triggered key starts a new window', () => {
    const debouncer = create();
    debouncer.trigger('a', { at: 0, debounced: true });
    debouncer.drop('a');
    debouncer.trigger('a', { at: 1_000, debounced: true });
    expect(debouncer.takeDue(2_000)).toBeUndefined();
    expect(debouncer.takeDue(3_000)).toEqual({ key: 'a', entry: entry(1_000, 3_000) });
  });
});

describe('Debouncer against a reference model', () => {
  const settings50 = { syncDelayMs: 50, syncMaxDelayMs: 200 };

  /** Deterministic pseudo-random sequence (LCG), so a failure reproduces. */
  function lcg(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
  }

  interface ModelSlot {
    entry: PendingEntry;
    seq: number;
  }

  function firstDue(
    model: Map<string, ModelSlot>,
    held: Set<string>,
    now: number,
    lane: Lane,
  ): string | undefined {
    let best: [string, ModelSlot] | undefined;
    for (const [key, slot] of model) {
      if (held.has(key) || slot.entry.dueAt > now || laneOf(slot.entry) !== lane) continue;
      const better =
        best === undefined ||
        (slot.entry.dueAt - best[1].entry.dueAt ||
          slot.entry.firstAt - best[1].entry.firstAt ||
          slot.seq - best[1].seq) < 0;
      if (better) best = [key, slot];
    }
    return best?.[0];
  }

  /** The lane rule spelled out: change entries first, but every CHANGES_PER_CATCH_UP + 1st take
   * goes to catch-up while both lanes have due keys. */
  function modelTake(
    model: Map<string, ModelSlot>,
    held: Set<string>,
    now: number,
    run: { changes: number },
  ): string | undefined {
    const changes = firstDue(model, held, now, 'changes');
    const catchUp = firstDue(model, held, now, 'catch-up');
    let taken: string | undefined;
    if (changes !== undefined && (catchUp === undefined || run.changes < CHANGES_PER_CATCH_UP)) {
      taken = changes;
    } else taken = catchUp;
    if (catchUp !== undefined) run.changes = taken === changes ? run.changes + 1 : 0;
    if (taken !== undefined) model.delete(taken);
    return taken;
  }

  it.each([1, 2, 3, 4, 5])('random operations, seed %i', (seed) => {
    const random = lcg(seed);
    const debouncer = new Debouncer<string>({ settings: settings50 });
    const model = new Map<string, ModelSlot>();
    const held = new Set<string>();
    const run = { changes: 0 };
    let now = 0;
    let seq = 0;
    for (let step = 0; step < 3_000; step += 1) {
      now += Math.floor(random() * 10);
      const key = `k${Math.floor(random() * 12)}`;
      const op = random();
      if (op < 0.5) {
        const debounced = random() < 0.7;
        const change = random() < 0.4 ? cm(now) : undefined;
        debouncer.trigger(key, { at: now, debounced, change });
        const known = model.get(key);
        if (known === undefined) seq += 1;
        model.set(key, {
          entry: applyTrigger(known?.entry, { at: now, debounced, change }, settings50).entry,
          seq: known?.seq ?? seq,
        });
      } else if (op < 0.6) {
        debouncer.hold(key);
        held.add(key);
      } else if (op < 0.7) {
        debouncer.release(key);
        held.delete(key);
      } else if (op < 0.75) {
        debouncer.drop(key);
        model.delete(key);
      } else {
        expect(debouncer.takeDue(now)?.key).toBe(modelTake(model, held, now, run));
      }
      expect(debouncer.size).toBe(model.size);
    }
  });
});
