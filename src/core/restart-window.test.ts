import { describe, expect, it } from 'vitest';

import type { RestartWindowPolicy } from './restart-window.ts';
import { evaluateWindow, parseRestartWindow } from './restart-window.ts';

interface Span {
  readonly cron: string;
  readonly duration: string;
}

function policy(timezone: string, windows: readonly Span[], deny?: readonly Span[]) {
  const parsed = parseRestartWindow(JSON.stringify({ timezone, windows, deny }));
  if (!('policy' in parsed)) throw new Error(parsed.problem);
  return parsed.policy;
}

const at = (iso: string): number => Date.parse(iso);

const UTC_MIDNIGHT = policy('UTC', [{ cron: '0 0 * * *', duration: '1h' }]);
const NEW_YORK_OFFICE = policy('America/New_York', [{ cron: '0 9 * * 1-5', duration: '8h' }]);
const BERLIN_NIGHT = policy('Europe/Berlin', [{ cron: '0 1 * * *', duration: '3h' }]);
const BERLIN_GAP = policy('Europe/Berlin', [{ cron: '30 2 * * *', duration: '1h' }]);
const CHRISTMAS_FREEZE = policy('UTC', [], [{ cron: '0 0 24 12 *', duration: '48h' }]);
const LUNCH_DENIED = policy(
  'UTC',
  [{ cron: '0 8 * * *', duration: '10h' }],
  [{ cron: '0 12 * * *', duration: '1h' }],
);
const MONDAYS_DENIED = policy(
  'UTC',
  [{ cron: '0 8 * * *', duration: '1h' }],
  [{ cron: '0 0 * * 1', duration: '24h' }],
);
const CHAINED_DENY = policy(
  'UTC',
  [],
  [
    { cron: '0 10 * * *', duration: '2h' },
    { cron: '0 11 * * *', duration: '3h' },
  ],
);
const FIRST_OR_MONDAY = policy('UTC', [{ cron: '0 0 1 * 1', duration: '1h' }]);

interface Row {
  readonly name: string;
  readonly policy: RestartWindowPolicy;
  readonly now: string;
  /** open: closesAt; closed: opensAt ('never' when none is found). */
  readonly open: boolean;
  readonly next: string | undefined;
  readonly denied?: boolean;
}

const ROWS: readonly Row[] = [
  {
    name: 'inside a daily window',
    policy: UTC_MIDNIGHT,
    now: '2026-06-01T00:30:00Z',
    open: true,
    next: '2026-06-01T01:00:00Z',
  },
  {
    name: 'at the opening instant (half-open start)',
    policy: UTC_MIDNIGHT,
    now: '2026-06-01T00:00:00Z',
    open: true,
    next: '2026-06-01T01:00:00Z',
  },
  {
    name: 'at the closing instant (half-open end)',
    policy: UTC_MIDNIGHT,
    now: '2026-06-01T01:00:00Z',
    open: false,
    next: '2026-06-02T00:00:00Z',
  },
  {
    name: 'a minute before the opening',
    policy: UTC_MIDNIGHT,
    now: '2026-06-01T23:59:00Z',
    open: false,
    next: '2026-06-02T00:00:00Z',
  },
  {
    name: 'office hours, EST',
    policy: NEW_YORK_OFFICE,
    now: '2026-03-06T14:00:00Z',
    open: true,
    next: '2026-03-06T22:00:00Z',
  },
  {
    name: 'before office hours, EST',
    policy: NEW_YORK_OFFICE,
    now: '2026-03-06T13:30:00Z',
    open: false,
    next: '2026-03-06T14:00:00Z',
  },
  {
    name: 'the weekend of the DST change: next opening is 09:00 EDT, an hour earlier in UTC',
    policy: NEW_YORK_OFFICE,
    now: '2026-03-07T15:00:00Z',
    open: false,
    next: '2026-03-09T13:00:00Z',
  },
  {
    name: 'office hours, EDT (13:30 UTC was closed a week earlier)',
    policy: NEW_YORK_OFFICE,
    now: '2026-03-09T13:30:00Z',
    open: true,
    next: '2026-03-09T21:00:00Z',
  },
  {
    name: 'a duration is elapsed time across spring forward (01:00 CET + 3h = 05:00 CEST)',
    policy: BERLIN_NIGHT,
    now: '2026-03-29T02:30:00Z',
    open: true,
    next: '2026-03-29T03:00:00Z',
  },
  {
    name: 'a start in the spring-forward gap opens at the first valid time after it',
    policy: BERLIN_GAP,
    now: '2026-03-29T00:45:00Z',
    open: false,
    next: '2026-03-29T01:00:00Z',
  },
  {
    name: 'a start in the repeated hour of fall back opens once',
    policy: BERLIN_GAP,
    now: '2026-10-25T01:45:00Z',
    open: false,
    next: '2026-10-26T01:30:00Z',
  },
  {
    name: 'deny-only: before the freeze',
    policy: CHRISTMAS_FREEZE,
    now: '2026-12-23T12:00:00Z',
    open: true,
    next: '2026-12-24T00:00:00Z',
  },
  {
    name: 'deny-only: inside the freeze',
    policy: CHRISTMAS_FREEZE,
    now: '2026-12-24T10:00:00Z',
    open: false,
    next: '2026-12-26T00:00:00Z',
    denied: true,
  },
  {
    name: 'a deny window inside an allowed one',
    policy: LUNCH_DENIED,
    now: '2026-06-01T12:30:00Z',
    open: false,
    next: '2026-06-01T13:00:00Z',
    denied: true,
  },
  {
    name: 'allowed before the deny window; it closes where the deny begins',
    policy: LUNCH_DENIED,
    now: '2026-06-01T09:00:00Z',
    open: true,
    next: '2026-06-01T12:00:00Z',
  },
  {
    name: "a deny window covering a whole day's window skips to the next day",
    policy: MONDAYS_DENIED,
    now: '2026-12-07T07:00:00Z',
    open: false,
    next: '2026-12-08T08:00:00Z',
    denied: true,
  },
  {
    name: 'overlapping deny windows deny until the last of them ends',
    policy: CHAINED_DENY,
    now: '2026-06-01T10:30:00Z',
    open: false,
    next: '2026-06-01T14:00:00Z',
    denied: true,
  },
  {
    name: 'day-of-month and day-of-week match as cron does (OR): Monday 8 June',
    policy: FIRST_OR_MONDAY,
    now: '2026-06-02T00:00:00Z',
    open: false,
    next: '2026-06-08T00:00:00Z',
  },
];

describe('evaluateWindow', () => {
  it.each(ROWS)('$name', (row) => {
    const verdict = evaluateWindow(row.policy, at(row.now));
    const next = verdict.open ? verdict.closesAt : verdict.opensAt;
    expect({
      open: verdict.open,
      next: next === undefined ? undefined : new Date(next).toISOString(),
    }).toEqual({
      open: row.open,
      next: row.next === undefined ? undefined : new Date(row.next).toISOString(),
    });
    if (!verdict.open) expect(verdict.deniedBy !== undefined).toBe(row.denied ?? false);
  });

  it('a deny-only policy with no deny window ahead never closes', () => {
    const never = policy('UTC', [], [{ cron: '0 0 29 2 1', duration: '1m' }]);
    expect(evaluateWindow(never, at('2026-06-01T00:00:00Z')).open).toBe(true);
  });
});

describe('parseRestartWindow', () => {
  it('reads the upstream proposal value unchanged', () => {
    const parsed = parseRestartWindow(
      '{"timezone":"UTC","windows":[{"cron":"0 0 * * *","duration":"1h"}]}',
    );
    expect('policy' in parsed && parsed.policy.allow.map((span) => span.durationMs)).toEqual([
      3_600_000,
    ]);
  });

  const window = { cron: '0 0 * * *', duration: '1h' };
  it.each([
    ['not JSON', '{', 'not JSON'],
    ['a list', '[]', 'must be a JSON object'],
    ['no time zone', JSON.stringify({ windows: [window] }), 'explicit IANA'],
    ['Local', JSON.stringify({ timezone: 'Local', windows: [window] }), 'explicit IANA'],
    [
      'an unknown zone',
      JSON.stringify({ timezone: 'Mars/Base', windows: [window] }),
      'unknown time zone',
    ],
    [
      'an unknown field',
      JSON.stringify({ timezone: 'UTC', windows: [window], x: 1 }),
      'unknown field "x"',
    ],
    [
      'an unknown window field',
      JSON.stringify({ timezone: 'UTC', windows: [{ ...window, tz: 'UTC' }] }),
      'windows[0]: unknown field "tz"',
    ],
    ['no windows', JSON.stringify({ timezone: 'UTC', windows: [] }), 'at least one window'],
    [
      'four fields',
      JSON.stringify({ timezone: 'UTC', windows: [{ ...window, cron: '0 0 * *' }] }),
      'five fields',
    ],
    [
      'a descriptor',
      JSON.stringify({ timezone: 'UTC', windows: [{ ...window, cron: '@daily' }] }),
      'five fields',
    ],
    [
      'a time zone in the cron',
      JSON.stringify({ timezone: 'UTC', windows: [{ ...window, cron: 'CRON_TZ=UTC 0 0 * * *' }] }),
      'not in the cron',
    ],
    [
      'a bad field',
      JSON.stringify({ timezone: 'UTC', windows: [{ ...window, cron: '0 25 * * *' }] }),
      'invalid cron',
    ],
    [
      'a date that never comes',
      JSON.stringify({ timezone: 'UTC', windows: [{ ...window, cron: '0 0 31 2 *' }] }),
      'never matches',
    ],
    [
      'a window under a minute',
      JSON.stringify({ timezone: 'UTC', windows: [{ ...window, duration: '30s' }] }),
      'from 1m to 24h',
    ],
    [
      'a window over a day',
      JSON.stringify({ timezone: 'UTC', windows: [{ ...window, duration: '25h' }] }),
      'from 1m to 24h',
    ],
    [
      'a duration that is not Go',
      JSON.stringify({ timezone: 'UTC', windows: [{ ...window, duration: '1d' }] }),
      'from 1m to 24h',
    ],
    [
      'a deny window over 31 days',
      JSON.stringify({ timezone: 'UTC', deny: [{ ...window, duration: '745h' }] }),
      'deny[0]: "duration" must be a duration from 1m to 744h',
    ],
    [
      'seventeen windows',
      JSON.stringify({ timezone: 'UTC', windows: Array.from({ length: 17 }, () => window) }),
      'at most 16',
    ],
    ['a huge value', 'x'.repeat(9000), 'longer than 8192'],
  ])('rejects %s', (_name, raw, problem) => {
    const parsed = parseRestartWindow(raw);
    expect('problem' in parsed && parsed.problem).toContain(problem);
  });
});
