/**
 * Planning with `--baseline-store=namespace` (docs/adr/0046): where B is read from and where each
 * change of it goes, for every combination of a W baseline, a store record and a roll.
 */
import { describe, expect, it } from 'vitest';
import type { SourceKey, WorkloadView } from '../../core/types.ts';
import { BASELINE, DEFAULT_ANNOTATION_KEYS as KEYS } from '../../core/types.ts';
import { kindRow } from '../../rollout/kinds.ts';
import { aContainer, aWorkload } from '../../testing/builders.ts';
import type { ReconcilePlan, SourceFacts, StoredBaseline } from './model.ts';
import { planReconcile } from './plan.ts';

const CM: SourceKey = 'configmap/app-config';
const SECRET: SourceKey = 'secret/db';
const CM_ENV = 'STAKATER_APP_CONFIG_CONFIGMAP';
const H0 = '0000000000000000000000000000000000000000';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';

function api(options: { env?: string; baseline?: string } = {}): WorkloadView {
  let app = aContainer('app').withEnvFrom('configmap', 'app-config').withEnvFrom('secret', 'db');
  if (options.env !== undefined) app = app.withStakaterEnv(CM_ENV, options.env);
  const workload = aWorkload('Deployment', 'team-a', 'api')
    .withAnnotation(KEYS.auto, 'true')
    .withContainer(app);
  return (
    options.baseline === undefined ? workload : workload.withAnnotation(BASELINE, options.baseline)
  ).build();
}

function present(hash: string): SourceFacts {
  return { status: { state: 'present', hash, uid: `uid-${hash.slice(0, 4)}`, annotations: {} } };
}

function plan(view: WorkloadView, cmHash: string, stored?: StoredBaseline): ReconcilePlan {
  const facts: Record<SourceKey, SourceFacts> = { [CM]: present(cmHash), [SECRET]: present(H2) };
  return planReconcile({
    view,
    row: kindRow('Deployment'),
    options: {
      strategy: 'env-vars',
      reloadOnCreate: false,
      reloadOnDelete: false,
      keys: KEYS,
      autoReloadAll: false,
      configRevisions: false,
    },
    candidates: {},
    facts: (key) => facts[key] ?? { status: { state: 'absent' } },
    marks: [],
    now: 1_767_225_600_000,
    storedBaseline: stored,
  });
}

const BOTH = (cm: string) => `{"${CM}":"${cm}","${SECRET}":"${H2}"}`;
const SECRET_ONLY = `{"${SECRET}":"${H2}"}`;

interface Case {
  readonly view: WorkloadView;
  readonly cmHash: string;
  readonly stored: StoredBaseline | undefined;
  readonly expected: {
    readonly action: string;
    readonly rolling: readonly SourceKey[];
    readonly baseline?: string | null;
    readonly baselineRecord?: string | null;
  };
}

function writesOf(p: ReconcilePlan): Case['expected'] {
  return {
    action: p.action,
    rolling: p.rolling,
    ...(p.baseline !== undefined && { baseline: p.baseline }),
    ...(p.baselineRecord !== undefined && { baselineRecord: p.baselineRecord }),
  };
}

describe('planReconcile with a baseline store', () => {
  it.each<[string, Case]>([
    [
      'store off: first sight writes W, as before',
      {
        view: api(),
        cmHash: H1,
        stored: undefined,
        expected: { action: 'baseline', rolling: [], baseline: BOTH(H1) },
      },
    ],
    [
      'first sight: the record goes to the store, nothing to W',
      {
        view: api(),
        cmHash: H1,
        stored: { raw: undefined },
        expected: { action: 'none', rolling: [], baselineRecord: BOTH(H1) },
      },
    ],
    [
      'record = D: nothing at all',
      {
        view: api(),
        cmHash: H1,
        stored: { raw: BOTH(H1) },
        expected: { action: 'none', rolling: [] },
      },
    ],
    [
      'changed while down (record ≠ D): one roll; W takes B, the record is retired',
      {
        view: api(),
        cmHash: H1,
        stored: { raw: BOTH(H0) },
        expected: { action: 'roll', rolling: [CM], baseline: SECRET_ONLY, baselineRecord: null },
      },
    ],
    [
      'record lost (deleted store object): no roll, a new record',
      {
        view: api(),
        cmHash: H1,
        stored: { raw: undefined },
        expected: { action: 'none', rolling: [], baselineRecord: BOTH(H1) },
      },
    ],
    [
      'record corrupted: counts as absent, no roll, rewritten',
      {
        view: api(),
        cmHash: H1,
        stored: { raw: 'not json' },
        expected: { action: 'none', rolling: [], baselineRecord: BOTH(H1) },
      },
    ],
    [
      "an older version's W baseline wins over the record, which is retired",
      {
        view: api({ baseline: BOTH(H1) }),
        cmHash: H1,
        stored: { raw: BOTH(H0) },
        expected: { action: 'none', rolling: [], baselineRecord: null },
      },
    ],
    [
      "an older version's W baseline still rolls a change (migration)",
      {
        view: api({ baseline: BOTH(H0) }),
        cmHash: H1,
        stored: { raw: undefined },
        expected: { action: 'roll', rolling: [CM], baseline: SECRET_ONLY },
      },
    ],
    [
      'rolled before (A = D): the record of the other key stays in the store',
      {
        view: api({ env: H1 }),
        cmHash: H1,
        stored: { raw: SECRET_ONLY },
        expected: { action: 'none', rolling: [] },
      },
    ],
    [
      'W B written by a roll owns B: a stale record is ignored and retired',
      {
        view: api({ env: H1, baseline: SECRET_ONLY }),
        cmHash: H1,
        stored: { raw: BOTH(H0) },
        expected: { action: 'none', rolling: [], baselineRecord: null },
      },
    ],
  ])('%s', (_name, { view, cmHash, stored, expected }) => {
    expect(writesOf(plan(view, cmHash, stored))).toEqual(expected);
  });

  it('W `{}` after a roll, every key at A = D: no write, the `{}` stays', () => {
    // The pass after the roll: removing `{}` would be a second write per roll, and a write in the
    // middle of a roll by eviction, which then never evicts.
    const rolled = aWorkload('Deployment', 'team-a', 'one')
      .withAnnotation(KEYS.auto, 'true')
      .withAnnotation(BASELINE, '{}')
      .withContainer(
        aContainer('app').withEnvFrom('configmap', 'app-config').withStakaterEnv(CM_ENV, H1),
      )
      .build();
    expect(writesOf(plan(rolled, H1, { raw: undefined }))).toEqual({ action: 'none', rolling: [] });
  });

  it('a roll whose every key gets A leaves W `{}`, so a lost retirement cannot resurface', () => {
    const view = aWorkload('Deployment', 'team-a', 'one')
      .withAnnotation(KEYS.auto, 'true')
      .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
      .build();
    const planned = plan(view, H1, { raw: `{"${CM}":"${H0}"}` });
    expect(writesOf(planned)).toEqual({
      action: 'roll',
      rolling: [CM],
      baseline: '{}',
      baselineRecord: null,
    });
    // The roll written, the record's removal lost (kill -9), and the template's A stripped by a
    // GitOps tool: B comes from W's `{}`, not from the stale record, so nothing rolls.
    const stripped = aWorkload('Deployment', 'team-a', 'one')
      .withAnnotation(KEYS.auto, 'true')
      .withAnnotation(BASELINE, '{}')
      .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
      .build();
    expect(writesOf(plan(stripped, H1, { raw: `{"${CM}":"${H0}"}` }))).toEqual({
      action: 'baseline',
      rolling: [],
      baseline: `{"${CM}":"${H1}"}`,
      baselineRecord: null,
    });
  });

  it("a second roll keeps W `{}` while the first roll's record removal may be unsent", () => {
    // The store hides a record whose removal waits to be sent (or was lost with the process): the
    // plan sees no record, but W's `{}` must stay so the record is never read again as B.
    const rolledOnce = aWorkload('Deployment', 'team-a', 'one')
      .withAnnotation(KEYS.auto, 'true')
      .withAnnotation(BASELINE, '{}')
      .withContainer(
        aContainer('app').withEnvFrom('configmap', 'app-config').withStakaterEnv(CM_ENV, H0),
      )
      .build();
    const planned = plan(rolledOnce, H1, { raw: undefined });
    expect(writesOf(planned)).toEqual({ action: 'roll', rolling: [CM] });
  });

  describe('after the store fell back: its records are read, B goes to W, the store is not written', () => {
    const readOnly = (raw: string | undefined): StoredBaseline => ({ raw, readOnly: true });
    const ALL_H0 = `{"${CM}":"${H0}","${SECRET}":"${H0}"}`;
    it.each<[string, Case]>([
      [
        'no record: first sight writes W, as with the store off',
        {
          view: api(),
          cmHash: H1,
          stored: readOnly(undefined),
          expected: { action: 'baseline', rolling: [], baseline: BOTH(H1) },
        },
      ],
      [
        'record = D: the record is copied into W, no roll',
        {
          view: api(),
          cmHash: H1,
          stored: readOnly(BOTH(H1)),
          expected: { action: 'baseline', rolling: [], baseline: BOTH(H1) },
        },
      ],
      [
        'changed while down (record ≠ D): one roll, W takes B',
        {
          view: api(),
          cmHash: H1,
          stored: readOnly(BOTH(H0)),
          expected: { action: 'roll', rolling: [CM], baseline: SECRET_ONLY },
        },
      ],
      [
        'a roll from the record of every key: W gets `{}`',
        {
          view: api(),
          cmHash: H1,
          stored: readOnly(ALL_H0),
          expected: { action: 'roll', rolling: [CM, SECRET], baseline: '{}' },
        },
      ],
      [
        'B copied into W, then a roll of every key: W keeps `{}`, never no B',
        {
          view: api({ baseline: ALL_H0 }),
          cmHash: H1,
          stored: readOnly(ALL_H0),
          expected: { action: 'roll', rolling: [CM, SECRET], baseline: '{}' },
        },
      ],
      [
        'rolled since (W `{}`): the stale record is not read, a key without A is baselined',
        {
          view: api({ env: H1, baseline: '{}' }),
          cmHash: H1,
          stored: readOnly(ALL_H0),
          expected: { action: 'baseline', rolling: [], baseline: SECRET_ONLY },
        },
      ],
      [
        'rolled by Reloader for one key, recorded for the other: that one rolls',
        {
          view: api({ env: H1 }),
          cmHash: H1,
          stored: readOnly(`{"${SECRET}":"${H0}"}`),
          expected: { action: 'roll', rolling: [SECRET], baseline: '{}' },
        },
      ],
    ])('%s', (_name, { view, cmHash, stored, expected }) => {
      expect(writesOf(plan(view, cmHash, stored))).toEqual(expected);
    });
  });
});
