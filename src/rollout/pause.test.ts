import { describe, expect, it } from 'vitest';
import type { WorkloadKind } from '../core/types.ts';
import { DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import { aWorkload } from '../testing/builders.ts';
import { kindRow } from './kinds.ts';
import type { PausePlan } from './pause.ts';
import { parseRfc3339, pauseResumeDue, planPause } from './pause.ts';

const P = KEYS.pausePeriod;
const AT = KEYS.pausedAt;
const NOW = Date.UTC(2026, 0, 2, 3, 10, 0);
const MINUTE = 60_000;
/** Paused two minutes ago. */
const PAUSED_2M_AGO = '2026-01-02T03:08:00Z';
const PAUSED_9M_AGO = '2026-01-02T03:01:00Z';

interface Case {
  readonly name: string;
  readonly kind?: WorkloadKind;
  readonly annotations?: Record<string, string>;
  readonly paused?: boolean;
  readonly rolls: boolean;
  readonly now?: number;
  readonly expected: Partial<PausePlan>;
}

const NOTHING: Partial<PausePlan> = {
  write: undefined,
  resumeAt: undefined,
  notice: undefined,
  problems: [],
};

const CASES: readonly Case[] = [
  {
    name: 'rule 1: a roll of an unpaused Deployment pauses it',
    annotations: { [P]: '5m' },
    rolls: true,
    expected: {
      write: { action: 'pause', pausedAtKey: AT, pausedAt: '2026-01-02T03:10:00Z' },
      resumeAt: NOW + 5 * MINUTE,
      notice: undefined,
      problems: [],
    },
  },
  {
    name: 'rule 1: paused-at has seconds precision, and so has the resume time',
    annotations: { [P]: '90s' },
    rolls: true,
    now: NOW + 999,
    expected: {
      write: { action: 'pause', pausedAtKey: AT, pausedAt: '2026-01-02T03:10:00Z' },
      resumeAt: NOW + 90_000,
    },
  },
  {
    name: 'rule 1: a stale paused-at on an unpaused Deployment does not matter',
    annotations: { [P]: '5m', [AT]: PAUSED_9M_AGO },
    rolls: true,
    expected: {
      write: { action: 'pause', pausedAtKey: AT, pausedAt: '2026-01-02T03:10:00Z' },
      resumeAt: NOW + 5 * MINUTE,
    },
  },
  {
    name: 'no roll, not paused: nothing',
    annotations: { [P]: '5m' },
    rolls: false,
    expected: NOTHING,
  },
  {
    name: 'rule 2: paused by kreload, a roll accumulates and does not extend the pause',
    annotations: { [P]: '5m', [AT]: PAUSED_2M_AGO },
    paused: true,
    rolls: true,
    expected: { ...NOTHING, resumeAt: NOW + 3 * MINUTE },
  },
  {
    name: 'rule 4: paused by kreload, nothing to roll, resume pending',
    annotations: { [P]: '5m', [AT]: PAUSED_2M_AGO },
    paused: true,
    rolls: false,
    expected: { ...NOTHING, resumeAt: NOW + 3 * MINUTE },
  },
  {
    name: 'rule 4: paused by kreload and due: resume',
    annotations: { [P]: '5m', [AT]: PAUSED_9M_AGO },
    paused: true,
    rolls: false,
    expected: { ...NOTHING, write: { action: 'resume', pausedAtKey: AT } },
  },
  {
    name: 'rule 4: due exactly now: resume',
    annotations: { [P]: '2m', [AT]: PAUSED_2M_AGO },
    paused: true,
    rolls: true,
    expected: { ...NOTHING, write: { action: 'resume', pausedAtKey: AT } },
  },
  {
    name: 'rule 3: paused by someone else, a roll is applied and noticed',
    annotations: { [P]: '5m' },
    paused: true,
    rolls: true,
    expected: { ...NOTHING, notice: 'paused-by-other' },
  },
  {
    name: 'rule 3: paused by someone else, nothing to roll: nothing',
    annotations: { [P]: '5m' },
    paused: true,
    rolls: false,
    expected: NOTHING,
  },
  {
    name: 'rule 5: the pause-period annotation is gone: resume at once',
    annotations: { [AT]: PAUSED_2M_AGO },
    paused: true,
    rolls: false,
    expected: { ...NOTHING, write: { action: 'resume', pausedAtKey: AT } },
  },
  {
    name: 'rule 5: unparsable paused-at: resume at once, with a warning',
    annotations: { [P]: '5m', [AT]: 'yesterday' },
    paused: true,
    rolls: false,
    expected: {
      ...NOTHING,
      write: { action: 'resume', pausedAtKey: AT },
      problems: [
        {
          on: 'workload',
          key: AT,
          value: 'yesterday',
          problem: 'invalid time "yesterday" (RFC 3339 expected)',
          consequence: 'resumed at once',
        },
      ],
    },
  },
  {
    name: 'rule 6: invalid P: the roll proceeds without a pause',
    annotations: { [P]: '5 minutes' },
    rolls: true,
    expected: {
      ...NOTHING,
      problems: [
        {
          on: 'workload',
          key: P,
          value: '5 minutes',
          problem: 'invalid duration "5 minutes"',
          consequence: 'the roll proceeds without a pause',
        },
      ],
    },
  },
  {
    name: 'rule 6: invalid P on a Deployment paused by kreload: resume at once',
    annotations: { [P]: '1d', [AT]: PAUSED_2M_AGO },
    paused: true,
    rolls: false,
    expected: {
      write: { action: 'resume', pausedAtKey: AT },
      problems: [
        {
          on: 'workload',
          key: P,
          value: '1d',
          problem: 'invalid duration "1d"',
          consequence: 'the roll proceeds without a pause',
        },
      ],
    },
  },
  { name: 'rule 7: P = 0: no pause', annotations: { [P]: '0s' }, rolls: true, expected: NOTHING },
  { name: 'rule 7: P < 0: no pause', annotations: { [P]: '-1m' }, rolls: true, expected: NOTHING },
  { name: 'no P: no pause', rolls: true, expected: NOTHING },
  {
    name: 'P on a DaemonSet: ignored, with a notice',
    kind: 'DaemonSet',
    annotations: { [P]: '5m' },
    rolls: true,
    expected: { ...NOTHING, notice: 'pause-period-ignored' },
  },
  {
    name: 'P on a DeploymentConfig: ignored even when paused-at is present',
    kind: 'DeploymentConfig',
    annotations: { [P]: '5m', [AT]: PAUSED_9M_AGO },
    paused: true,
    rolls: false,
    expected: { ...NOTHING, notice: 'pause-period-ignored' },
  },
  { name: 'no P on a StatefulSet: nothing', kind: 'StatefulSet', rolls: true, expected: NOTHING },
];

describe('planPause (§7.2)', () => {
  it.each(CASES)('$name', (c) => {
    const kind = c.kind ?? 'Deployment';
    const view = aWorkload(kind, 'ns', 'web')
      .withAnnotations(c.annotations ?? {})
      .paused(c.paused ?? false)
      .build();
    const plan = planPause({
      view,
      row: kindRow(kind),
      keys: KEYS,
      rolls: c.rolls,
      now: c.now ?? NOW,
    });
    expect(plan).toMatchObject(c.expected);
  });

  it('uses the configured keys', () => {
    const keys = { pausePeriod: 'x/period', pausedAt: 'x/at' };
    const view = aWorkload('Deployment', 'ns', 'web').withAnnotation('x/period', '1m').build();
    const plan = planPause({ view, row: kindRow('Deployment'), keys, rolls: true, now: NOW });
    expect(plan.write).toEqual({
      action: 'pause',
      pausedAtKey: 'x/at',
      pausedAt: '2026-01-02T03:10:00Z',
    });
  });
});

describe('pauseResumeDue (§7.2 rule 5)', () => {
  const deployment = (annotations: Record<string, string>, paused = true) =>
    aWorkload('Deployment', 'ns', 'web').withAnnotations(annotations).paused(paused).build();

  it.each([
    ['pending', deployment({ [P]: '5m', [AT]: PAUSED_2M_AGO }), NOW + 3 * MINUTE],
    ['overdue', deployment({ [P]: '5m', [AT]: PAUSED_9M_AGO }), 'now'],
    ['unparsable paused-at', deployment({ [P]: '5m', [AT]: 'x' }), 'now'],
    ['pause-period gone', deployment({ [AT]: PAUSED_2M_AGO }), 'now'],
    ['pause-period invalid', deployment({ [P]: 'soon', [AT]: PAUSED_2M_AGO }), 'now'],
    ['not paused', deployment({ [P]: '5m', [AT]: PAUSED_2M_AGO }, false), undefined],
    ['paused by someone else', deployment({ [P]: '5m' }), undefined],
    [
      'not a Deployment',
      aWorkload('DeploymentConfig', 'ns', 'web')
        .withAnnotations({ [P]: '5m', [AT]: PAUSED_9M_AGO })
        .paused()
        .build(),
      undefined,
    ],
  ] as const)('%s', (_name, view, expected) => {
    expect(pauseResumeDue(view, NOW, KEYS)).toBe(expected);
  });
});

describe('parseRfc3339', () => {
  it.each([
    ['2026-01-02T03:04:05Z', Date.UTC(2026, 0, 2, 3, 4, 5)],
    ['2026-01-02t03:04:05z', Date.UTC(2026, 0, 2, 3, 4, 5)],
    ['2026-01-02T03:04:05.5Z', Date.UTC(2026, 0, 2, 3, 4, 5, 500)],
    ['2026-01-02T05:04:05+02:00', Date.UTC(2026, 0, 2, 3, 4, 5)],
    ['2026-01-02 03:04:05Z', undefined],
    ['2026-01-02', undefined],
    ['2026-13-02T03:04:05Z', undefined],
    ['', undefined],
  ])('%j', (text, expected) => {
    expect(parseRfc3339(text)).toBe(expected);
  });
});
