import { describe, expect, it } from 'vitest';

import type { FlapStatus } from '../core/flap-breaker.ts';
import { parseRestartWindow } from '../core/restart-window.ts';
import type { SourceKey } from '../core/types.ts';
import type { HoldInput } from './holds.ts';
import { holdsEnd, holdsOf } from './holds.ts';

const NIGHTLY = '{"timezone":"UTC","windows":[{"cron":"0 2 * * *","duration":"1h"}]}';
const NOON = Date.parse('2026-06-01T12:00:00Z');
const CM: SourceKey = 'configmap/app';
const SECRET: SourceKey = 'secret/tls';
const CLOSED: FlapStatus = { open: false };
const TLS_FLAPPING: FlapStatus = {
  open: true,
  openedAt: NOON - 60_000,
  closesAt: NOON + 120_000,
  changesInPeriod: 11,
  episodeChanges: 40,
};

function input(overrides: Partial<HoldInput> & { readonly value?: string }): HoldInput {
  const value = 'value' in overrides ? overrides.value : undefined;
  return {
    windowValue: value,
    window: value === undefined ? undefined : parseRestartWindow(value),
    windowsEnabled: true,
    rolling: [CM, SECRET],
    flapping: () => CLOSED,
    now: NOON,
    ...overrides,
  };
}

describe('holdsOf', () => {
  it.each([
    { name: 'no window, nothing flapping: admitted', given: {}, holds: [] },
    {
      name: 'outside the window: held until it opens',
      given: { value: NIGHTLY },
      holds: [{ reason: 'window', until: Date.parse('2026-06-02T02:00:00Z') }],
    },
    {
      name: 'inside the window: admitted',
      given: { value: NIGHTLY, now: Date.parse('2026-06-01T02:30:00Z') },
      holds: [],
    },
    {
      name: 'the window without --enable-restart-windows fails closed',
      given: { value: NIGHTLY, windowsEnabled: false },
      holds: [{ reason: 'windows_off', until: undefined }],
    },
    {
      name: 'an invalid window fails closed',
      given: { value: '{"timezone":"UTC"}' },
      holds: [{ reason: 'window_invalid', until: undefined }],
    },
    {
      name: 'a flapping source holds until its breaker closes',
      given: { flapping: (key: SourceKey) => (key === SECRET ? TLS_FLAPPING : CLOSED) },
      holds: [{ reason: 'flapping', until: NOON + 120_000 }],
    },
    {
      name: 'a flapping source the roll is not for holds nothing',
      given: {
        rolling: [CM],
        flapping: (key: SourceKey) => (key === SECRET ? TLS_FLAPPING : CLOSED),
      },
      holds: [],
    },
  ])('$name', ({ given, holds }) => {
    expect(holdsOf(input(given)).map(({ reason, until }) => ({ reason, until }))).toEqual(holds);
  });

  it('says why and when in words', () => {
    const [window, flapping] = holdsOf(
      input({ value: NIGHTLY, rolling: [SECRET], flapping: () => TLS_FLAPPING }),
    );
    expect(window?.detail).toBe(
      'outside the restart windows; the next window opens at 2026-06-02T02:00:00Z',
    );
    expect(flapping?.detail).toBe(
      'secret/tls is flapping (11 changes in the period, 40 since 2026-06-01T11:59:00Z); ' +
        'its breaker closes at 2026-06-01T12:02:00Z if it stays quiet',
    );
  });
});

describe('holdsEnd', () => {
  it.each([
    { name: 'no hold', ends: [], end: undefined },
    { name: 'the latest end: the roll waits for every hold', ends: [5, 9, 7], end: 9 },
    { name: 'a hold without an end', ends: [5, undefined], end: undefined },
  ])('$name', ({ ends, end }) => {
    const holds = ends.map((until) => ({ reason: 'window' as const, until, detail: '' }));
    expect(holdsEnd(holds)).toBe(end);
  });
});
