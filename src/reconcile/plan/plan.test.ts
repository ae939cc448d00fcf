import { GADGET_ROW } from '../../testing/configured-kinds.ts';
import { describe, expect, it } from 'vitest';
import { formatLastReloadedFrom } from '../../core/state.ts';
import type { ReloadStrategy, SourceKey, WorkloadView } from '../../core/types.ts';
import {
  BASELINE,
  DEFAULT_ANNOTATION_KEYS as KEYS,
  DELETE_MARKER as MARKER,
  LAST_RELOADED_FROM,
  PENDING_ROLL,
  SOURCE_HASHES,
} from '../../core/types.ts';
import { kindRow } from '../../rollout/kinds.ts';
import type { WorkloadKindRow } from '../../rollout/kinds.ts';
import { buildPatch } from '../../rollout/patch.ts';
import { aContainer, aWorkload, configMapVolume } from '../../testing/builders.ts';
import { applyPatchToView } from '../../testing/recording-writer.ts';
import type { Mark } from '../../core/marks.ts';
import { aCreateMark, aDeleteMark } from '../../testing/marks.ts';
import type { PlanInput, ReconcilePlan, SourceFacts } from './model.ts';
import { planReconcile } from './plan.ts';
import { mayHoldAppliedState } from './applied.ts';

const NS = 'team-a';
const CM: SourceKey = 'configmap/app-config';
const SECRET: SourceKey = 'secret/db';
const CM_ENV = 'STAKATER_APP_CONFIG_CONFIGMAP';
const H0 = '0000000000000000000000000000000000000000';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const NOW = 1_767_225_600_000;

const DEPLOYMENT = kindRow('Deployment');

/** Deployment `api` with `auto: "true"`: container `app` uses ConfigMap app-config and Secret db. */
function api(env: Readonly<Record<string, string>> = {}) {
  let app = aContainer('app').withEnvFrom('configmap', 'app-config').withEnvFrom('secret', 'db');
  for (const [name, value] of Object.entries(env)) app = app.withStakaterEnv(name, value);
  return aWorkload('Deployment', NS, 'api').withAnnotation(KEYS.auto, 'true').withContainer(app);
}

const AUTO_WORKLOAD = api();

function present(hash: string, uid = `uid-${hash.slice(0, 4)}`): SourceFacts {
  return { status: { state: 'present', hash, uid, annotations: {} } };
}

const ABSENT: SourceFacts = { status: { state: 'absent' } };
const UNKNOWN: SourceFacts = { status: { state: 'unknown' } };

interface Scenario {
  readonly view: WorkloadView;
  readonly row?: WorkloadKindRow;
  readonly strategy?: ReloadStrategy;
  readonly reloadOnCreate?: boolean;
  readonly reloadOnDelete?: boolean;
  readonly sources?: Partial<Record<SourceKey, SourceFacts>>;
  readonly candidates?: PlanInput['candidates'];
  readonly marks?: readonly Mark[];
}

function plan(scenario: Scenario): ReconcilePlan {
  return planReconcile({
    view: scenario.view,
    row: scenario.row ?? DEPLOYMENT,
    options: {
      strategy: scenario.strategy ?? 'env-vars',
      reloadOnCreate: scenario.reloadOnCreate ?? false,
      reloadOnDelete: scenario.reloadOnDelete ?? false,
      keys: KEYS,
      autoReloadAll: false,
      configRevisions: false,
    },
    candidates: scenario.candidates ?? {},
    facts: (key) => scenario.sources?.[key] ?? ABSENT,
    marks: scenario.marks ?? [],
    now: NOW,
  });
}

/** The plan's write, reduced to what a reader checks. */
function writeOf(p: ReconcilePlan): Record<string, unknown> {
  const out: Record<string, unknown> = { action: p.action, rolling: p.rolling };
  if (p.envWrites.length > 0) out.env = p.envWrites;
  for (const field of [
    'baseline',
    'templateSourceHashes',
    'workloadSourceHashes',
    'lastReloadedFrom',
  ] as const) {
    if (p[field] !== undefined) out[field] = p[field];
  }
  return out;
}

function ruleOf(p: ReconcilePlan, key: SourceKey): string | undefined {
  return p.keys.find((k) => k.key === key)?.rule;
}

const deleteMark: readonly Mark[] = [aDeleteMark(CM, 'u-old')];
const createMark = (uid: string): readonly Mark[] => [aCreateMark(CM, uid)];
const cmOnly = (facts: SourceFacts): Scenario['sources'] => ({
  [CM]: facts,
  [SECRET]: present(H2),
});
const withBaseline = (map: string) => AUTO_WORKLOAD.withAnnotation(BASELINE, map).build();
const bothBaselined = (cmHash: string) => withBaseline(`{"${CM}":"${cmHash}","${SECRET}":"${H2}"}`);
const envApplied = (cmHash: string) =>
  api({ [CM_ENV]: cmHash })
    .withAnnotation(BASELINE, `{"${SECRET}":"${H2}"}`)
    .build();

describe('planReconcile: rules R1–R9 per key (env-vars)', () => {
  it.each<[string, Scenario, string, Record<string, unknown>]>([
    [
      'R1 unknown cache',
      { view: bothBaselined(H0), sources: cmOnly(UNKNOWN) },
      'R1',
      { action: 'none', rolling: [] },
    ],
    [
      'R1 absent, no delete mark',
      { view: bothBaselined(H0), reloadOnDelete: true, sources: cmOnly(ABSENT) },
      'R1',
      { action: 'none', rolling: [] },
    ],
    [
      'R1 deleted, reload-on-delete off',
      { view: bothBaselined(H0), sources: cmOnly(ABSENT), marks: deleteMark },
      'R1',
      { action: 'none', rolling: [] },
    ],
    [
      'R2 env var = D',
      { view: envApplied(H1), sources: cmOnly(present(H1)) },
      'R2',
      { action: 'none', rolling: [] },
    ],
    [
      'R3 env var ≠ D',
      { view: envApplied(H0), sources: cmOnly(present(H1)) },
      'R3',
      { action: 'roll', rolling: [CM], env: [{ container: 'app', name: CM_ENV, value: H1 }] },
    ],
    [
      'R4 B = D',
      { view: bothBaselined(H1), sources: cmOnly(present(H1)) },
      'R4',
      { action: 'none', rolling: [] },
    ],
    [
      'R5 B ≠ D',
      { view: bothBaselined(H0), sources: cmOnly(present(H1)) },
      'R5',
      {
        action: 'roll',
        rolling: [CM],
        env: [{ container: 'app', name: CM_ENV, value: H1 }],
        baseline: `{"${SECRET}":"${H2}"}`,
      },
    ],
    [
      'R6 deleted while tracked',
      {
        view: withBaseline(`{"${SECRET}":"${H2}"}`),
        reloadOnDelete: true,
        sources: cmOnly(ABSENT),
        marks: deleteMark,
      },
      'R6',
      { action: 'roll', rolling: [CM], env: [{ container: 'app', name: CM_ENV, value: MARKER }] },
    ],
    [
      'R7 changed after tracking began',
      {
        view: withBaseline(`{"${SECRET}":"${H2}"}`),
        sources: cmOnly({ ...present(H1), lastChange: NOW - 10, trackingStart: NOW - 20 }),
      },
      'R7',
      { action: 'roll', rolling: [CM], env: [{ container: 'app', name: CM_ENV, value: H1 }] },
    ],
    [
      'R8 created with reload-on-create',
      {
        view: withBaseline(`{"${SECRET}":"${H2}"}`),
        reloadOnCreate: true,
        sources: cmOnly(present(H1, 'u-new')),
        marks: createMark('u-new'),
      },
      'R8',
      { action: 'roll', rolling: [CM], env: [{ container: 'app', name: CM_ENV, value: H1 }] },
    ],
    [
      'R9 create mark for another UID',
      {
        view: withBaseline(`{"${SECRET}":"${H2}"}`),
        reloadOnCreate: true,
        sources: cmOnly(present(H1, 'u-new')),
        marks: createMark('u-gone'),
      },
      'R9',
      { action: 'baseline', rolling: [], baseline: `{"${CM}":"${H1}","${SECRET}":"${H2}"}` },
    ],
    [
      'R9 create mark without reload-on-create',
      {
        view: withBaseline(`{"${SECRET}":"${H2}"}`),
        sources: cmOnly(present(H1, 'u-new')),
        marks: createMark('u-new'),
      },
      'R9',
      { action: 'baseline', rolling: [], baseline: `{"${CM}":"${H1}","${SECRET}":"${H2}"}` },
    ],
    [
      'R9 changed before tracking began',
      {
        view: withBaseline(`{"${SECRET}":"${H2}"}`),
        sources: cmOnly({ ...present(H1), lastChange: NOW - 20, trackingStart: NOW - 10 }),
      },
      'R9',
      { action: 'baseline', rolling: [], baseline: `{"${CM}":"${H1}","${SECRET}":"${H2}"}` },
    ],
    [
      'R9 first sight',
      { view: AUTO_WORKLOAD.build(), sources: cmOnly(present(H1)) },
      'R9',
      { action: 'baseline', rolling: [], baseline: `{"${CM}":"${H1}","${SECRET}":"${H2}"}` },
    ],
  ])('%s', (_name, scenario, rule, expected) => {
    const result = plan(scenario);
    expect(ruleOf(result, CM)).toBe(rule);
    expect(writeOf(result)).toEqual(expected);
  });
});

/** Deployment `listed` with an explicit list naming app-config; its container does not reference it. */
function listed() {
  return aWorkload('Deployment', NS, 'listed')
    .withAnnotation(KEYS.configmapReload, 'app-config')
    .withContainer(aContainer('app'));
}

const LISTED_CANDIDATES = { CONFIGMAP: ['app-config'] };

function lrf(hash: string, observedAt = NOW / 1000, name = 'app-config'): string {
  return formatLastReloadedFrom({
    type: 'CONFIGMAP',
    name,
    namespace: NS,
    hash,
    containerRefs: ['app'],
    observedAt,
  });
}

type Held = 'A' | 'B' | 'none';

/** The listed workload holding `hash` as A (per strategy) or B for app-config. */
function listedHolding(strategy: ReloadStrategy, held: Held, hash: string): WorkloadView {
  const base = listed();
  if (held === 'B') return base.withAnnotation(BASELINE, `{"${CM}":"${hash}"}`).build();
  if (held === 'none') return base.build();
  return strategy === 'env-vars'
    ? base
        .withPodSpec({
          ...base.build().podSpec,
          containers: [aContainer('app').withStakaterEnv(CM_ENV, hash).build()],
        })
        .build()
    : base.withTemplateAnnotation(SOURCE_HASHES, `{"${CM}":"${hash}"}`).build();
}

/** The roll of app-config to `hash`, as each strategy writes it. */
function rolled(strategy: ReloadStrategy, hash: string, held: Held): Record<string, unknown> {
  const baseline = held === 'B' ? { baseline: null } : {};
  return strategy === 'env-vars'
    ? {
        action: 'roll',
        rolling: [CM],
        env: [{ container: 'app', name: CM_ENV, value: hash }],
        ...baseline,
      }
    : {
        action: 'roll',
        rolling: [CM],
        templateSourceHashes: `{"${CM}":"${hash}"}`,
        lastReloadedFrom: lrf(hash),
        ...baseline,
      };
}

const NOTHING = { action: 'none', rolling: [] };
const JOB_LIKE: WorkloadKindRow = { ...DEPLOYMENT, kind: 'Job', rollsOnDelete: false };

interface Row55 {
  readonly situation: string;
  readonly held: Held;
  readonly facts: SourceFacts;
  readonly create?: boolean;
  readonly del?: boolean;
  readonly marks?: readonly Mark[];
  readonly row?: WorkloadKindRow;
  readonly expected: (strategy: ReloadStrategy) => Record<string, unknown>;
}

const TABLE_5_5: readonly Row55[] = [
  {
    situation: 'created, create=false',
    held: 'none',
    facts: present(H1, 'u1'),
    marks: createMark('u1'),
    expected: () => ({ action: 'baseline', rolling: [], baseline: `{"${CM}":"${H1}"}` }),
  },
  {
    situation: 'created, create=true',
    held: 'none',
    facts: present(H1, 'u1'),
    create: true,
    marks: createMark('u1'),
    expected: (s) => rolled(s, H1, 'none'),
  },
  {
    situation: 'created while kreload was down',
    held: 'none',
    facts: present(H1, 'u1'),
    create: true,
    expected: () => ({ action: 'baseline', rolling: [], baseline: `{"${CM}":"${H1}"}` }),
  },
  {
    situation: 'deleted, delete=false',
    held: 'B',
    facts: ABSENT,
    marks: deleteMark,
    expected: () => NOTHING,
  },
  {
    situation: 'deleted, delete=true, W has A',
    held: 'A',
    facts: ABSENT,
    del: true,
    marks: deleteMark,
    expected: (s) => rolled(s, MARKER, 'A'),
  },
  {
    situation: 'deleted, delete=true, W has B',
    held: 'B',
    facts: ABSENT,
    del: true,
    marks: deleteMark,
    expected: (s) => rolled(s, MARKER, 'B'),
  },
  {
    situation: 'deleted, delete=true, W has neither',
    held: 'none',
    facts: ABSENT,
    del: true,
    marks: deleteMark,
    expected: (s) => rolled(s, MARKER, 'none'),
  },
  {
    situation: 'deleted, delete=true, Job or CronJob',
    held: 'B',
    facts: ABSENT,
    del: true,
    marks: deleteMark,
    row: JOB_LIKE,
    expected: () => NOTHING,
  },
  {
    situation: 'deleted while kreload was down',
    held: 'A',
    facts: ABSENT,
    del: true,
    expected: () => NOTHING,
  },
  {
    situation: 'recreated with h1, A = h1',
    held: 'A',
    facts: present(H1),
    create: true,
    del: true,
    expected: () => NOTHING,
  },
  {
    situation: 'recreated with h1, B = h1',
    held: 'B',
    facts: present(H1),
    create: true,
    del: true,
    expected: () => NOTHING,
  },
  {
    situation: 'recreated with h2, A = h1',
    held: 'A',
    facts: present(H2),
    expected: (s) => rolled(s, H2, 'A'),
  },
  {
    situation: 'recreated with h2, B = h1',
    held: 'B',
    facts: present(H2),
    expected: (s) => rolled(s, H2, 'B'),
  },
  {
    situation: 'recreated after a delete roll',
    held: 'A',
    facts: present(H1),
    expected: (s) => rolled(s, H1, 'A'),
  },
  {
    situation: 'recreated with the same content, create=true',
    held: 'A',
    facts: present(H1, 'u2'),
    create: true,
    marks: createMark('u2'),
    expected: () => NOTHING,
  },
  {
    situation: 'deleted and recreated in one window, same content',
    held: 'B',
    facts: present(H1, 'u2'),
    create: true,
    del: true,
    marks: [aCreateMark(CM, 'u2'), ...deleteMark],
    expected: () => NOTHING,
  },
];

describe('planReconcile: create, delete and recreate (§5.5)', () => {
  const cases = TABLE_5_5.flatMap((row) =>
    (['env-vars', 'annotations'] as const).map((strategy) => ({ ...row, strategy })),
  );
  it.each(cases)('$situation ($strategy)', (row) => {
    // "recreated after a delete roll" holds A = MARKER.
    const heldHash = row.situation.startsWith('recreated after') ? MARKER : H1;
    const result = plan({
      view: listedHolding(row.strategy, row.held, heldHash),
      row: row.row,
      strategy: row.strategy,
      reloadOnCreate: row.create,
      reloadOnDelete: row.del,
      sources: { [CM]: row.facts },
      candidates: LISTED_CANDIDATES,
      marks: row.marks,
    });
    expect(writeOf(result)).toEqual(row.expected(row.strategy));
  });
});

describe('planReconcile: housekeeping and pruning (§5.6)', () => {
  const OLD: SourceKey = 'configmap/old';
  const GONE: SourceKey = 'configmap/gone';

  it('prunes B of a present source the workload no longer tracks, in a metadata-only patch', () => {
    const result = plan({
      view: api()
        .withAnnotation(BASELINE, `{"${OLD}":"${H1}","${CM}":"${H1}","${SECRET}":"${H2}"}`)
        .build(),
      sources: { [CM]: present(H1), [SECRET]: present(H2), [OLD]: present(H1) },
    });
    expect(writeOf(result)).toEqual({
      action: 'baseline',
      rolling: [],
      baseline: `{"${CM}":"${H1}","${SECRET}":"${H2}"}`,
    });
  });

  it('removes the baseline annotation when nothing is tracked any more', () => {
    const view = aWorkload('Deployment', NS, 'api')
      .withContainer(aContainer('app'))
      .withAnnotation(BASELINE, `{"${OLD}":"${H1}"}`)
      .build();
    expect(writeOf(plan({ view, sources: { [OLD]: present(H1) } }))).toEqual({
      action: 'baseline',
      rolling: [],
      baseline: null,
    });
  });

  it('keeps B of an absent source that is still referenced', () => {
    const view = aWorkload('Deployment', NS, 'api')
      .withAnnotation(KEYS.auto, 'true')
      .withContainer(
        aContainer('app')
          .withEnvFrom('configmap', 'app-config')
          .withEnvFrom('secret', 'db')
          .withVolumeMount('v'),
      )
      .withVolume(configMapVolume('v', 'gone'))
      .withAnnotation(BASELINE, `{"${GONE}":"${H1}"}`)
      .build();
    const result = plan({ view, sources: { [CM]: present(H1), [SECRET]: present(H2) } });
    expect(result.keys.map((k) => k.key)).toEqual([CM, GONE, SECRET]);
    expect(result.baseline).toBe(`{"${CM}":"${H1}","${GONE}":"${H1}","${SECRET}":"${H2}"}`);
  });

  it('keeps B of an absent source named by an explicit list', () => {
    const view = listed().withAnnotation(BASELINE, `{"${CM}":"${H1}"}`).build();
    expect(writeOf(plan({ view }))).toEqual(NOTHING);
  });

  const searching = aWorkload('Deployment', NS, 'search')
    .withAnnotation(KEYS.search, 'true')
    .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
    .withAnnotation(BASELINE, `{"${CM}":"${H1}"}`)
    .build();

  it('prunes B of an absent search/match source without a delete mark', () => {
    expect(writeOf(plan({ view: searching }))).toEqual({
      action: 'baseline',
      rolling: [],
      baseline: null,
    });
  });

  it('keeps B of an absent search/match source whose delete mark recorded match', () => {
    const marks = [aDeleteMark(CM, 'u1', { [KEYS.match]: 'true' })];
    expect(writeOf(plan({ view: searching, marks }))).toEqual(NOTHING);
  });

  const annotated = (sourceHashes: string) =>
    api().withTemplateAnnotation(SOURCE_HASHES, sourceHashes).build();

  it('keeps source-hashes of untracked keys when nothing rolls', () => {
    const view = annotated(`{"${CM}":"${H1}","${OLD}":"${H1}","${SECRET}":"${H2}"}`);
    const result = plan({
      view,
      strategy: 'annotations',
      sources: { [CM]: present(H1), [SECRET]: present(H2) },
    });
    expect(writeOf(result)).toEqual(NOTHING);
  });

  it('drops source-hashes of untracked keys in a write that rolls anyway', () => {
    const view = annotated(`{"${CM}":"${H0}","${OLD}":"${H1}","${SECRET}":"${H2}"}`);
    const result = plan({
      view,
      strategy: 'annotations',
      sources: { [CM]: present(H1, 'u'), [SECRET]: present(H2) },
    });
    expect(result.templateSourceHashes).toBe(`{"${CM}":"${H1}","${SECRET}":"${H2}"}`);
  });

  it('keeps the previous A or B of keys with an unknown D in an annotations roll (§6.2 item 2)', () => {
    const view = api().withAnnotation(BASELINE, `{"${CM}":"${H0}","${SECRET}":"${H2}"}`).build();
    const result = plan({
      view,
      strategy: 'annotations',
      sources: { [CM]: present(H1), [SECRET]: UNKNOWN },
    });
    expect(result.templateSourceHashes).toBe(`{"${CM}":"${H1}","${SECRET}":"${H2}"}`);
    expect(result.baseline).toBeNull();
  });

  it('writes nothing when state is complete', () => {
    const result = plan({ view: bothBaselined(H1), sources: cmOnly(present(H1)) });
    expect(writeOf(result)).toEqual(NOTHING);
  });
});

describe('planReconcile: the examples of §6.1 and §6.2', () => {
  const view = api()
    .withResourceVersion('48213')
    .withAnnotation(BASELINE, `{"${CM}":"${H0}"}`)
    .build();
  const sources = cmOnly({ ...present(H1), observedAt: NOW + 999 });

  it('env-vars: one ConfigMap rolls and the Secret baseline is recorded', () => {
    const result = plan({ view, sources });
    expect(JSON.stringify(buildPatch(DEPLOYMENT, view, result)?.body)).toBe(
      `{"metadata":{"resourceVersion":"48213","annotations":{"kreload.io/baseline":"{\\"secret/db\\":\\"${H2}\\"}"}},` +
        `"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"STAKATER_APP_CONFIG_CONFIGMAP","value":"${H1}"}]}]}}}}`,
    );
  });

  it('annotations: last-reloaded-from and source-hashes, baseline removed', () => {
    const withSecretBaseline = {
      ...view,
      annotations: { ...view.annotations, [BASELINE]: `{"${CM}":"${H0}","${SECRET}":"${H2}"}` },
    };
    const result = plan({ view: withSecretBaseline, strategy: 'annotations', sources });
    expect(JSON.stringify(buildPatch(DEPLOYMENT, view, result)?.body)).toBe(
      '{"metadata":{"resourceVersion":"48213","annotations":{"kreload.io/baseline":null}},' +
        '"spec":{"template":{"metadata":{"annotations":{' +
        `"reloader.stakater.com/last-reloaded-from":"{\\"type\\":\\"CONFIGMAP\\",\\"name\\":\\"app-config\\",\\"namespace\\":\\"team-a\\",\\"hash\\":\\"${H1}\\",\\"containerRefs\\":[\\"app\\"],\\"observedAt\\":1767225600}",` +
        `"kreload.io/source-hashes":"{\\"configmap/app-config\\":\\"${H1}\\",\\"secret/db\\":\\"${H2}\\"}"}}}}}`,
    );
  });
});

describe('planReconcile: last-reloaded-from names the key observed last (§6.2 item 1)', () => {
  const view = bothBaselined(H0);
  const SECRET_LRF = (observedAt: number) =>
    formatLastReloadedFrom({
      type: 'SECRET',
      name: 'db',
      namespace: NS,
      hash: H1,
      containerRefs: ['app'],
      observedAt,
    });

  it.each([
    ['the Secret, observed later', NOW - 5000, NOW - 1000, SECRET_LRF((NOW - 1000) / 1000)],
    ['the ConfigMap, observed later', NOW - 1000, NOW - 5000, lrf(H1, (NOW - 1000) / 1000)],
    ['the smallest key on a tie', NOW - 1000, NOW - 1000, lrf(H1, (NOW - 1000) / 1000)],
    ['the smallest key when nothing was observed (now)', undefined, undefined, lrf(H1)],
    ['an unobserved key counts as observed now', NOW - 1000, undefined, SECRET_LRF(NOW / 1000)],
  ])('%s', (_name, cmAt, secretAt, expected) => {
    const result = plan({
      view: {
        ...view,
        annotations: { ...view.annotations, [BASELINE]: `{"${CM}":"${H0}","${SECRET}":"${H0}"}` },
      },
      strategy: 'annotations',
      sources: {
        [CM]: { ...present(H1), observedAt: cmAt },
        [SECRET]: { ...present(H1), observedAt: secretAt },
      },
    });
    expect(result.rolling).toEqual([CM, SECRET]);
    expect(result.lastReloadedFrom).toBe(expected);
  });
});

describe('planReconcile: env-var name collisions (§6.3)', () => {
  const MY: SourceKey = 'configmap/my-config';
  const DOT: SourceKey = 'configmap/my.config';
  const SHARED = 'STAKATER_MY_CONFIG_CONFIGMAP';
  const H3 = '3333333333333333333333333333333333333333';

  function colliding(env: Readonly<Record<string, string>> = {}) {
    let app = aContainer('app')
      .withEnvFrom('configmap', 'my-config')
      .withEnvFrom('configmap', 'my.config');
    for (const [name, value] of Object.entries(env)) app = app.withStakaterEnv(name, value);
    return aWorkload('Deployment', NS, 'c').withAnnotation(KEYS.auto, 'true').withContainer(app);
  }

  const bothBaselinedColliding = colliding({ [SHARED]: H1 })
    .withAnnotation(BASELINE, `{"${MY}":"${H1}","${DOT}":"${H2}"}`)
    .build();

  it('reports the group and lives on baselines before the first roll (migration, steps 1 and 4)', () => {
    const result = plan({
      view: colliding({ [SHARED]: H1 }).build(),
      sources: { [MY]: present(H1), [DOT]: present(H2) },
    });
    expect(result.collisions).toEqual([{ envVar: SHARED, container: 'app', keys: [MY, DOT] }]);
    // The shared variable equals D(my-config), yet is no A: R9, not R2.
    expect(ruleOf(result, MY)).toBe('R9');
    expect(writeOf(result)).toEqual({
      action: 'baseline',
      rolling: [],
      baseline: `{"${MY}":"${H1}","${DOT}":"${H2}"}`,
    });
  });

  it('a roll sets the shared variable and source-hashes for every key of the group (steps 2 and 3)', () => {
    const result = plan({
      view: bothBaselinedColliding,
      sources: { [MY]: present(H1), [DOT]: present(H3) },
    });
    expect(writeOf(result)).toEqual({
      action: 'roll',
      rolling: [DOT],
      env: [{ container: 'app', name: SHARED, value: H3 }],
      templateSourceHashes: `{"${MY}":"${H1}","${DOT}":"${H3}"}`,
      baseline: null,
    });
  });

  it.each([
    ['the later observed key wins', NOW - 10, NOW - 20, 'H3'],
    ['the other key, observed later', NOW - 20, NOW - 10, 'H0'],
    ['ties go to the smallest key', NOW - 10, NOW - 10, 'H3'],
  ])('when both roll, %s', (_name, myAt, dotAt, winner) => {
    const result = plan({
      view: bothBaselinedColliding,
      sources: {
        [MY]: { ...present(H3), observedAt: myAt },
        [DOT]: { ...present(H0), observedAt: dotAt },
      },
    });
    expect(result.envWrites).toEqual([
      { container: 'app', name: SHARED, value: winner === 'H3' ? H3 : H0 },
    ]);
    expect(result.templateSourceHashes).toBe(`{"${MY}":"${H3}","${DOT}":"${H0}"}`);
  });

  it('does not flap: after the roll the same state plans nothing, and one change rolls once', () => {
    const sources = { [MY]: present(H1), [DOT]: present(H3) };
    const first = plan({ view: bothBaselinedColliding, sources });
    const patch = buildPatch(DEPLOYMENT, bothBaselinedColliding, first);
    if (!patch) throw new Error('expected a patch');
    const after = applyPatchToView(bothBaselinedColliding, patch);
    expect(writeOf(plan({ view: after, sources }))).toEqual(NOTHING);
    const next = plan({ view: after, sources: { ...sources, [MY]: present(H2) } });
    expect(ruleOf(next, MY)).toBe('R3');
    expect(writeOf(next)).toEqual({
      action: 'roll',
      rolling: [MY],
      env: [{ container: 'app', name: SHARED, value: H2 }],
      templateSourceHashes: `{"${MY}":"${H2}","${DOT}":"${H3}"}`,
    });
  });

  it('does not group sources whose variables land in different containers', () => {
    const view = aWorkload('Deployment', NS, 'c')
      .withAnnotation(KEYS.auto, 'true')
      .withContainer(aContainer('a').withEnvFrom('configmap', 'my-config'))
      .withContainer(aContainer('b').withEnvFrom('configmap', 'my.config'))
      .build();
    expect(plan({ view, sources: { [MY]: present(H1), [DOT]: present(H2) } }).collisions).toEqual(
      [],
    );
  });

  it('ignores collisions in the annotations strategy', () => {
    const result = plan({
      view: colliding().build(),
      strategy: 'annotations',
      sources: { [MY]: present(H1), [DOT]: present(H2) },
    });
    expect(result.collisions).toEqual([]);
  });
});

describe('planReconcile: migration from Reloader (§5.7)', () => {
  const SECRET_ENV = 'STAKATER_DB_SECRET';

  it.each<[string, Scenario, Record<string, unknown>]>([
    [
      'env-vars: STAKATER values equal to D change nothing',
      { view: api({ [CM_ENV]: H1, [SECRET_ENV]: H2 }).build(), sources: cmOnly(present(H1)) },
      NOTHING,
    ],
    [
      'env-vars: a source without a value gets a baseline',
      { view: api({ [CM_ENV]: H1 }).build(), sources: cmOnly(present(H1)) },
      { action: 'baseline', rolling: [], baseline: `{"${SECRET}":"${H2}"}` },
    ],
    [
      'env-vars: a value that differs means Reloader missed a change',
      { view: api({ [CM_ENV]: H0, [SECRET_ENV]: H2 }).build(), sources: cmOnly(present(H1)) },
      { action: 'roll', rolling: [CM], env: [{ container: 'app', name: CM_ENV, value: H1 }] },
    ],
    [
      'annotations: last-reloaded-from supplies A for the source it names',
      {
        view: api().withTemplateAnnotation(LAST_RELOADED_FROM, lrf(H1, 1)).build(),
        strategy: 'annotations',
        sources: cmOnly(present(H1)),
      },
      { action: 'baseline', rolling: [], baseline: `{"${SECRET}":"${H2}"}` },
    ],
    [
      'changing strategy ignores the other strategy state',
      {
        view: api({ [CM_ENV]: H0, [SECRET_ENV]: H0 }).build(),
        strategy: 'annotations',
        sources: cmOnly(present(H1)),
      },
      { action: 'baseline', rolling: [], baseline: `{"${CM}":"${H1}","${SECRET}":"${H2}"}` },
    ],
  ])('%s', (_name, scenario, expected) => {
    expect(writeOf(plan(scenario))).toEqual(expected);
  });
});

describe('planReconcile: applied-state lookup order (§5.1)', () => {
  const side = (value: string) => aContainer('side').withStakaterEnv(CM_ENV, value);

  it.each<[string, Scenario, string]>([
    [
      'env-vars: PT source-hashes before the env var',
      {
        view: api({ [CM_ENV]: H0 })
          .withTemplateAnnotation(SOURCE_HASHES, `{"${CM}":"${H1}"}`)
          .build(),
        sources: cmOnly(present(H1)),
      },
      'R2',
    ],
    [
      'env-vars: the selected container before others',
      {
        view: aWorkload('Deployment', NS, 'api')
          .withAnnotation(KEYS.auto, 'true')
          .withContainer(side(H1))
          .withContainer(
            aContainer('app').withEnvFrom('configmap', 'app-config').withStakaterEnv(CM_ENV, H0),
          )
          .build(),
        sources: cmOnly(present(H1)),
      },
      'R3',
    ],
    [
      'env-vars: then the first container that has the variable',
      {
        view: aWorkload('Deployment', NS, 'api')
          .withAnnotation(KEYS.auto, 'true')
          .withContainer(side(H1))
          .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
          .build(),
        sources: cmOnly(present(H1)),
      },
      'R2',
    ],
    [
      'annotations: source-hashes before last-reloaded-from',
      {
        view: api()
          .withTemplateAnnotation(SOURCE_HASHES, `{"${CM}":"${H1}"}`)
          .withTemplateAnnotation(LAST_RELOADED_FROM, lrf(H0))
          .build(),
        strategy: 'annotations',
        sources: cmOnly(present(H1)),
      },
      'R2',
    ],
    [
      'annotations: last-reloaded-from of another namespace is no A',
      {
        view: api()
          .withTemplateAnnotation(LAST_RELOADED_FROM, lrf(H0).replace('team-a', 'team-b'))
          .build(),
        strategy: 'annotations',
        sources: cmOnly(present(H1)),
      },
      'R9',
    ],
    [
      'annotations: last-reloaded-from of another source is no A',
      {
        view: api()
          .withTemplateAnnotation(LAST_RELOADED_FROM, lrf(H0, 1, 'other'))
          .build(),
        strategy: 'annotations',
        sources: cmOnly(present(H1)),
      },
      'R9',
    ],
  ])('%s', (_name, scenario, rule) => {
    expect(ruleOf(plan(scenario), CM)).toBe(rule);
  });

  it('the roll goes to the selected container, not to the one the stale value came from', () => {
    const view = aWorkload('Deployment', NS, 'api')
      .withAnnotation(KEYS.auto, 'true')
      .withContainer(side(H0))
      .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
      .build();
    expect(plan({ view, sources: cmOnly(present(H1)) }).envWrites).toEqual([
      { container: 'app', name: CM_ENV, value: H1 },
    ]);
  });
});

describe('planReconcile: malformed state counts as absent (§5.1)', () => {
  it.each([
    ['W baseline', api().withAnnotation(BASELINE, '{not json').build(), BASELINE, '{not json'],
    [
      'PT source-hashes',
      api().withTemplateAnnotation(SOURCE_HASHES, '{"configmap/app-config":"XYZ"}').build(),
      SOURCE_HASHES,
      '{"configmap/app-config":"XYZ"}',
    ],
    [
      'PT last-reloaded-from',
      api().withTemplateAnnotation(LAST_RELOADED_FROM, '[]').build(),
      LAST_RELOADED_FROM,
      '[]',
    ],
  ])('%s: a problem, then the baseline path', (_name, view, key, value) => {
    const result = plan({ view, strategy: 'annotations', sources: cmOnly(present(H1)) });
    expect(result.problems).toContainEqual(expect.objectContaining({ on: 'workload', key, value }));
    expect(writeOf(result)).toEqual({
      action: 'baseline',
      rolling: [],
      baseline: `{"${CM}":"${H1}","${SECRET}":"${H2}"}`,
    });
  });

  it('reports annotation problems of the decision once', () => {
    const view = api().withAnnotation(KEYS.configmapReload, 'app-(').build();
    const result = plan({
      view,
      sources: cmOnly(present(H1)),
      candidates: { CONFIGMAP: ['app-config', 'x'] },
    });
    expect(result.problems.filter((p) => p.key === KEYS.configmapReload)).toHaveLength(1);
  });
});

describe('planReconcile: workloads without a regular container (§13.2 no_container)', () => {
  it('skips a tracked workload without containers and writes nothing', () => {
    const view = aWorkload('Deployment', NS, 'ref')
      .withAnnotation(KEYS.configmapReload, 'app-config')
      .withWorkloadRef()
      .build();
    const result = plan({ view, sources: { [CM]: present(H1) }, candidates: LISTED_CANDIDATES });
    expect(result.skip).toBe('no_container');
    expect(result.keys.map((k) => k.key)).toEqual([CM]);
    expect(writeOf(result)).toEqual(NOTHING);
  });

  it('does not skip a workload that tracks nothing', () => {
    const view = aWorkload('Deployment', NS, 'ref').build();
    expect(plan({ view }).skip).toBeUndefined();
  });

  it('a roll by eviction needs no container: a configured kind without a pod template', () => {
    const row = GADGET_ROW;
    const view = aWorkload('Gadget', NS, 'g')
      .withAnnotation(KEYS.configmapReload, 'app-config')
      .withAnnotation(BASELINE, `{"${CM}":"${H0}"}`)
      .build();
    const result = plan({ view, row, sources: { [CM]: present(H1) } });
    expect(result.skip).toBeUndefined();
    expect(result).toMatchObject({ action: 'roll', rollAction: 'evict-pods' });
  });
});

describe('planReconcile: applied state in W (CronJob, restart Rollout)', () => {
  const W_ROW: WorkloadKindRow = {
    ...DEPLOYMENT,
    kind: 'CronJob',
    appliedState: 'W',
    rollsOnDelete: false,
  };

  it.each(['env-vars', 'annotations'] as const)(
    '%s: the roll writes W source-hashes for every tracked key',
    (strategy) => {
      const view = api().withAnnotation(BASELINE, `{"${CM}":"${H0}","${SECRET}":"${H2}"}`).build();
      const result = plan({ view, row: W_ROW, strategy, sources: cmOnly(present(H1)) });
      expect(result.mode).toBe('workload');
      expect(writeOf(result)).toEqual({
        action: 'roll',
        rolling: [CM],
        workloadSourceHashes: `{"${CM}":"${H1}","${SECRET}":"${H2}"}`,
        baseline: null,
      });
    },
  );

  it('reads A from W source-hashes only', () => {
    const view = api({ [CM_ENV]: H0 })
      .withAnnotation(SOURCE_HASHES, `{"${CM}":"${H1}","${SECRET}":"${H2}"}`)
      .build();
    expect(writeOf(plan({ view, row: W_ROW, sources: cmOnly(present(H1)) }))).toEqual(NOTHING);
  });

  it('never rolls for a deletion', () => {
    const view = api()
      .withAnnotation(SOURCE_HASHES, `{"${CM}":"${H1}","${SECRET}":"${H2}"}`)
      .build();
    const result = plan({
      view,
      row: W_ROW,
      reloadOnDelete: true,
      sources: cmOnly(ABSENT),
      marks: deleteMark,
    });
    expect(writeOf(result)).toEqual(NOTHING);
  });
});

describe('planReconcile: the roll action and the CronJob Job change', () => {
  const changedCm = { sources: cmOnly(present(H1)) };
  const baselined = () => bothBaselined(H0);

  it.each([
    ['Deployment', {}, 'template-patch'],
    ['CronJob', {}, 'create-job-from-cronjob'],
    ['Job', {}, 'recreate-job'],
    ['Rollout', {}, 'template-patch'],
    ['Rollout', { [KEYS.rolloutStrategy]: 'restart' }, 'rollout-restart'],
    ['DeploymentConfig', {}, 'template-patch'],
  ] as const)('%s %j rolls with %s', (kind, annotations, action) => {
    const view = { ...baselined(), annotations: { ...baselined().annotations, ...annotations } };
    const result = plan({ view, row: kindRow(kind), ...changedCm });
    expect(result).toMatchObject({ action: 'roll', rollAction: action });
  });

  it('CronJob env-vars: the env var goes to the Job, the CronJob gets W state only', () => {
    const result = plan({ view: baselined(), row: kindRow('CronJob'), ...changedCm });
    expect(result.jobTemplate).toEqual({
      envWrites: [{ container: 'app', name: CM_ENV, value: H1 }],
    });
    expect(writeOf(result)).toEqual({
      action: 'roll',
      rolling: [CM],
      workloadSourceHashes: `{"${CM}":"${H1}","${SECRET}":"${H2}"}`,
      baseline: null,
    });
  });

  it('CronJob annotations: last-reloaded-from goes to the Job', () => {
    const result = plan({
      view: baselined(),
      row: kindRow('CronJob'),
      strategy: 'annotations',
      ...changedCm,
    });
    expect(result.jobTemplate).toEqual({
      envWrites: [],
      lastReloadedFrom: formatLastReloadedFrom({
        type: 'CONFIGMAP',
        name: 'app-config',
        namespace: NS,
        hash: H1,
        containerRefs: ['app'],
        observedAt: NOW / 1000,
      }),
    });
  });

  it.each([
    ['a restart Rollout', 'Rollout', { [KEYS.rolloutStrategy]: 'restart' }],
    ['a Deployment', 'Deployment', {}],
  ] as const)('%s has no Job change', (_name, kind, annotations) => {
    const view = { ...baselined(), annotations: { ...baselined().annotations, ...annotations } };
    expect(plan({ view, row: kindRow(kind), ...changedCm }).jobTemplate).toBeUndefined();
  });

  it('a Rollout with workloadRef is skipped even if a template were projected', () => {
    const view = { ...baselined(), hasWorkloadRef: true };
    const result = plan({ view, row: kindRow('Rollout'), ...changedCm });
    expect(result).toMatchObject({ action: 'none', skip: 'no_container' });
  });
});

describe('planReconcile: a held roll recorded in kreload.io/pending-roll (docs/adr/0043)', () => {
  const pendingOn = (view: ReturnType<typeof api>, map: string) =>
    view.withAnnotation(PENDING_ROLL, map).build();
  const SECRET_BASELINED = api().withAnnotation(BASELINE, `{"${SECRET}":"${H2}"}`);

  it.each([
    {
      name: 'no A, no B, no change seen by this process: the pending entry rolls (R7)',
      view: pendingOn(SECRET_BASELINED, `{"${CM}":"${H1}"}`),
      cm: present(H1),
      rule: 'R7',
      action: 'roll',
      pendingRoll: null,
    },
    {
      name: 'the same without the pending entry records a baseline (R9): what a restart loses',
      view: SECRET_BASELINED.build(),
      cm: present(H1),
      rule: 'R9',
      action: 'baseline',
      pendingRoll: undefined,
    },
    {
      name: 'D unknown (caches not synced yet): the entry is kept',
      view: pendingOn(SECRET_BASELINED, `{"${CM}":"${H1}"}`),
      cm: UNKNOWN,
      rule: 'R1',
      action: 'none',
      pendingRoll: undefined,
    },
    {
      name: 'A = D (rolled meanwhile): nothing owed, the entry is removed',
      view: pendingOn(
        api({ [CM_ENV]: H1 }).withAnnotation(BASELINE, `{"${SECRET}":"${H2}"}`),
        `{"${CM}":"${H1}"}`,
      ),
      cm: present(H1),
      rule: 'R2',
      action: 'baseline',
      pendingRoll: null,
    },
    {
      name: 'A ≠ D: the roll (R3) covers the entry and removes it in the same write',
      view: pendingOn(
        api({ [CM_ENV]: H0 }).withAnnotation(BASELINE, `{"${SECRET}":"${H2}"}`),
        `{"${CM}":"${H1}"}`,
      ),
      cm: present(H1),
      rule: 'R3',
      action: 'roll',
      pendingRoll: null,
    },
  ])('$name', ({ view, cm, rule, action, pendingRoll }) => {
    const p = plan({ view, sources: cmOnly(cm) });
    expect({ rule: ruleOf(p, CM), action: p.action, pendingRoll: p.pendingRoll }).toEqual({
      rule,
      action,
      pendingRoll,
    });
  });

  it('the roll that ends a hold removes the pending key in its one patch', () => {
    const view = pendingOn(SECRET_BASELINED.withResourceVersion('7'), `{"${CM}":"${H1}"}`);
    const result = plan({ view, sources: cmOnly(present(H1)) });
    expect(JSON.stringify(buildPatch(DEPLOYMENT, view, result)?.body)).toBe(
      '{"metadata":{"resourceVersion":"7","annotations":{"kreload.io/pending-roll":null}},' +
        `"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"STAKATER_APP_CONFIG_CONFIGMAP","value":"${H1}"}]}]}}}}`,
    );
  });
});

describe('mayHoldAppliedState: a workload without state needs no plan to know it has no A', () => {
  const lastReloadedFrom = lrf(H1);
  const hashes = `{"${CM}":"${H1}"}`;
  const cases: readonly (readonly [string, WorkloadView, ReloadStrategy, boolean])[] = [
    ['no state at all', AUTO_WORKLOAD.build(), 'env-vars', false],
    ['no state, annotations strategy', AUTO_WORKLOAD.build(), 'annotations', false],
    ['a STAKATER_ env var', api({ [CM_ENV]: H1 }).build(), 'env-vars', true],
    [
      'PT source-hashes',
      AUTO_WORKLOAD.withTemplateAnnotation(SOURCE_HASHES, hashes).build(),
      'env-vars',
      true,
    ],
    [
      'PT last-reloaded-from',
      AUTO_WORKLOAD.withTemplateAnnotation(LAST_RELOADED_FROM, lastReloadedFrom).build(),
      'annotations',
      true,
    ],
    [
      'a baseline only (B is no A)',
      AUTO_WORKLOAD.withAnnotation(BASELINE, hashes).build(),
      'env-vars',
      false,
    ],
    ['a revision digest', { ...AUTO_WORKLOAD.build(), revisionDigest: 'abc' }, 'env-vars', true],
  ];

  it.each(cases)('%s', (_name, view, strategy, expected) => {
    expect(mayHoldAppliedState(view)).toBe(expected);
    const planned = plan({ view, strategy, sources: { [CM]: present(H2), [SECRET]: present(H2) } });
    const applied = planned.keys.filter((key) => key.applied !== undefined);
    // False is only ever said of a workload whose plan reads no A for any key.
    if (!expected) expect(applied).toEqual([]);
    if (expected && view.revisionDigest === undefined) expect(applied).not.toEqual([]);
  });

  it('W source-hashes of a CronJob', () => {
    const cronJob = aWorkload('CronJob', NS, 'nightly')
      .withAnnotation(KEYS.auto, 'true')
      .withAnnotation(SOURCE_HASHES, hashes)
      .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
      .build();
    expect(mayHoldAppliedState(cronJob)).toBe(true);
    const planned = plan({
      view: cronJob,
      row: kindRow('CronJob'),
      sources: { [CM]: present(H2) },
    });
    expect(planned.keys.map((key) => key.applied)).toEqual([H1]);
  });
});
