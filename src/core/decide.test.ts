import { describe, expect, it } from 'vitest';
import { aContainer, aWorkload, configMapVolume } from '../testing/builders.ts';
import { ReloadListCache } from './annotation-values.ts';
import { decide, type DecideInput, hasReloadList, trackedContainer } from './decide.ts';
import {
  type AnnotationKeys,
  type AnnotationProblem,
  type Annotations,
  DEFAULT_ANNOTATION_KEYS as K,
  type DecisionResult,
  type SourceType,
} from './types.ts';

interface Case {
  rule: string;
  type?: SourceType;
  name?: string;
  w?: Annotations;
  pt?: Annotations;
  s?: Annotations;
  all?: boolean;
  keys?: AnnotationKeys;
  expected: DecisionResult;
}

function inputOf(c: Omit<Case, 'rule' | 'expected'>): DecideInput {
  return {
    workload: aWorkload('Deployment', 'ns', 'api')
      .withAnnotations(c.w ?? {})
      .withTemplateAnnotations(c.pt ?? {})
      .build(),
    type: c.type ?? 'CONFIGMAP',
    name: c.name ?? 'cfg',
    sourceAnnotations: c.s ?? {},
    keys: c.keys ?? K,
    autoReloadAll: c.all ?? false,
  };
}

const T = 'true';
const F = 'false';

const cases: Case[] = [
  // Step 8 and the defaults.
  { rule: 'no annotations', expected: 'NO' },
  { rule: 'no annotations, --auto-reload-all', all: true, expected: 'AUTO' },

  // Step 2: ignore on the source.
  { rule: 'ignore beats auto', s: { [K.ignore]: T }, w: { [K.auto]: T }, expected: 'NO' },
  {
    rule: 'ignore beats a list',
    s: { [K.ignore]: T },
    w: { [K.configmapReload]: 'cfg' },
    expected: 'NO',
  },
  { rule: 'ignore beats --auto-reload-all', s: { [K.ignore]: T }, all: true, expected: 'NO' },
  {
    rule: 'ignore beats search+match',
    s: { [K.ignore]: T, [K.match]: T },
    w: { [K.search]: T },
    expected: 'NO',
  },
  {
    rule: 'ignore "True" is not set',
    s: { [K.ignore]: 'True' },
    w: { [K.auto]: T },
    expected: 'AUTO',
  },
  { rule: 'ignore "false"', s: { [K.ignore]: F }, w: { [K.auto]: T }, expected: 'AUTO' },
  {
    rule: 'ignore on the workload has no effect',
    w: { [K.ignore]: T, [K.auto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'ignore on the pod template has no effect',
    pt: { [K.ignore]: T, [K.auto]: T },
    expected: 'AUTO',
  },

  // Step 5: explicit reload lists (D3 anchoring).
  { rule: 'list names the source', w: { [K.configmapReload]: 'cfg' }, expected: 'LIST' },
  { rule: 'list names another source', w: { [K.configmapReload]: 'other' }, expected: 'NO' },
  { rule: 'second element matches', w: { [K.configmapReload]: 'other, cfg' }, expected: 'LIST' },
  { rule: 'regex element', w: { [K.configmapReload]: 'c.g' }, expected: 'LIST' },
  { rule: 'prefix does not match (anchored)', w: { [K.configmapReload]: 'cf' }, expected: 'NO' },
  { rule: 'suffix does not match (anchored)', w: { [K.configmapReload]: 'fg' }, expected: 'NO' },
  {
    rule: 'D3: a|b does not match ab',
    name: 'ab',
    w: { [K.configmapReload]: 'a|b' },
    expected: 'NO',
  },
  {
    rule: 'D3: a|b does not match axx',
    name: 'axx',
    w: { [K.configmapReload]: 'a|b' },
    expected: 'NO',
  },
  {
    rule: 'D3: a|b does not match xxb',
    name: 'xxb',
    w: { [K.configmapReload]: 'a|b' },
    expected: 'NO',
  },
  { rule: 'D3: a|b matches b', name: 'b', w: { [K.configmapReload]: 'a|b' }, expected: 'LIST' },
  {
    rule: 'dot is a wildcard: my.cm matches myxcm',
    name: 'myxcm',
    w: { [K.configmapReload]: 'my.cm' },
    expected: 'LIST',
  },
  {
    rule: 'escaped dot: my\\.cm does not match myxcm',
    name: 'myxcm',
    w: { [K.configmapReload]: 'my\\.cm' },
    expected: 'NO',
  },
  {
    rule: 'invalid element skipped, valid one applies',
    w: { [K.configmapReload]: 'app-(,cfg' },
    expected: 'LIST',
  },
  { rule: 'only an invalid element', w: { [K.configmapReload]: 'cfg(' }, expected: 'NO' },
  { rule: 'empty list', w: { [K.configmapReload]: '' }, expected: 'NO' },
  {
    rule: 'Secret list does not apply to a ConfigMap',
    w: { [K.secretReload]: 'cfg' },
    expected: 'NO',
  },
  { rule: 'Secret list', type: 'SECRET', w: { [K.secretReload]: 'cfg' }, expected: 'LIST' },
  {
    rule: 'ConfigMap list does not apply to a Secret',
    type: 'SECRET',
    w: { [K.configmapReload]: 'cfg' },
    expected: 'NO',
  },
  {
    rule: 'SPC list',
    type: 'SECRETPROVIDERCLASS',
    name: 'vault',
    w: { [K.secretProviderClassReload]: 'vault' },
    expected: 'LIST',
  },
  {
    rule: 'list with typed auto "false" is still LIST',
    w: { [K.configmapReload]: 'cfg', [K.configmapAuto]: F },
    expected: 'LIST',
  },
  {
    rule: 'list with auto "false" is still LIST',
    w: { [K.configmapReload]: 'cfg', [K.auto]: F },
    expected: 'LIST',
  },

  // Step 4: exclusion (W only) beats every later step.
  { rule: 'exclude beats auto', w: { [K.configmapExclude]: 'cfg', [K.auto]: T }, expected: 'NO' },
  {
    rule: 'exclude beats a list',
    w: { [K.configmapExclude]: 'cfg', [K.configmapReload]: 'cfg' },
    expected: 'NO',
  },
  {
    rule: 'exclude beats typed auto',
    w: { [K.configmapExclude]: 'cfg', [K.configmapAuto]: T },
    expected: 'NO',
  },
  {
    rule: 'exclude beats search+match',
    w: { [K.configmapExclude]: 'cfg', [K.search]: T },
    s: { [K.match]: T },
    expected: 'NO',
  },
  {
    rule: 'exclude beats --auto-reload-all',
    w: { [K.configmapExclude]: 'cfg' },
    all: true,
    expected: 'NO',
  },
  {
    rule: 'exclude entries are trimmed',
    w: { [K.configmapExclude]: ' other , cfg ', [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'exclude is not a regex',
    w: { [K.configmapExclude]: 'c.g', [K.auto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'exclude of another name',
    w: { [K.configmapExclude]: 'other', [K.auto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'Secret exclude does not exclude a ConfigMap',
    w: { [K.secretExclude]: 'cfg', [K.auto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'Secret exclude',
    type: 'SECRET',
    w: { [K.secretExclude]: 'cfg', [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'SPC exclude',
    type: 'SECRETPROVIDERCLASS',
    w: { [K.secretProviderClassExclude]: 'cfg', [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'exclude on PT is never read',
    w: { [K.auto]: T },
    pt: { [K.configmapExclude]: 'cfg' },
    expected: 'AUTO',
  },
  {
    rule: 'exclude on PT is never read, also when PT is chosen',
    pt: { [K.auto]: T, [K.configmapExclude]: 'cfg' },
    expected: 'AUTO',
  },
  {
    rule: 'exclude on W applies when PT is chosen',
    w: { [K.configmapExclude]: 'cfg' },
    pt: { [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'exclude on W beats a PT list',
    w: { [K.configmapExclude]: 'cfg' },
    pt: { [K.configmapReload]: 'cfg' },
    expected: 'NO',
  },

  // Step 6: search and match.
  { rule: 'search + match', w: { [K.search]: T }, s: { [K.match]: T }, expected: 'AUTO' },
  { rule: 'search without match', w: { [K.search]: T }, expected: 'NO' },
  { rule: 'search + match "True"', w: { [K.search]: T }, s: { [K.match]: 'True' }, expected: 'NO' },
  { rule: 'search "True" + match', w: { [K.search]: 'True' }, s: { [K.match]: T }, expected: 'NO' },
  { rule: 'search "1" + match', w: { [K.search]: '1' }, s: { [K.match]: T }, expected: 'NO' },
  { rule: 'match alone', s: { [K.match]: T }, expected: 'NO' },
  { rule: 'search + match on PT', pt: { [K.search]: T }, s: { [K.match]: T }, expected: 'AUTO' },
  {
    rule: 'auto + search without match covers every source',
    w: { [K.auto]: T, [K.search]: T },
    expected: 'AUTO',
  },
  {
    rule: 'search + match with typed auto "false"',
    w: { [K.search]: T, [K.configmapAuto]: F },
    s: { [K.match]: T },
    expected: 'AUTO',
  },

  // Step 7: auto and typed auto.
  { rule: 'auto "true"', w: { [K.auto]: T }, expected: 'AUTO' },
  { rule: 'auto "True"', w: { [K.auto]: 'True' }, expected: 'AUTO' },
  { rule: 'auto "1"', w: { [K.auto]: '1' }, expected: 'AUTO' },
  { rule: 'auto "t"', w: { [K.auto]: 't' }, expected: 'AUTO' },
  { rule: 'auto "false"', w: { [K.auto]: F }, expected: 'NO' },
  { rule: 'auto "yes" counts as false', w: { [K.auto]: 'yes' }, expected: 'NO' },
  { rule: 'auto " true" is not trimmed', w: { [K.auto]: ' true' }, expected: 'NO' },
  { rule: 'auto covers Secrets', type: 'SECRET', w: { [K.auto]: T }, expected: 'AUTO' },
  { rule: 'auto covers SPCs', type: 'SECRETPROVIDERCLASS', w: { [K.auto]: T }, expected: 'AUTO' },
  { rule: 'ConfigMap typed auto', w: { [K.configmapAuto]: T }, expected: 'AUTO' },
  {
    rule: 'ConfigMap typed auto does not cover Secrets',
    type: 'SECRET',
    w: { [K.configmapAuto]: T },
    expected: 'NO',
  },
  { rule: 'Secret typed auto', type: 'SECRET', w: { [K.secretAuto]: T }, expected: 'AUTO' },
  {
    rule: 'SPC typed auto',
    type: 'SECRETPROVIDERCLASS',
    w: { [K.secretProviderClassAuto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'typed "true" wins over auto "false"',
    w: { [K.auto]: F, [K.configmapAuto]: T },
    expected: 'AUTO',
  },

  // D5: a typed "false" (or unparsable) vetoes its type.
  {
    rule: 'D5: typed "false" beats auto "true"',
    w: { [K.auto]: T, [K.configmapAuto]: F },
    expected: 'NO',
  },
  {
    rule: 'D5: typed "yes" beats auto "true"',
    w: { [K.auto]: T, [K.configmapAuto]: 'yes' },
    expected: 'NO',
  },
  {
    rule: 'D5: typed "0" beats auto "true"',
    w: { [K.auto]: T, [K.configmapAuto]: '0' },
    expected: 'NO',
  },
  {
    rule: 'D5: typed "false" beats --auto-reload-all',
    w: { [K.configmapAuto]: F },
    all: true,
    expected: 'NO',
  },
  {
    rule: 'D5: Secret typed "false" beats auto',
    type: 'SECRET',
    w: { [K.auto]: T, [K.secretAuto]: F },
    expected: 'NO',
  },
  {
    rule: 'D5: SPC typed "false" beats auto',
    type: 'SECRETPROVIDERCLASS',
    w: { [K.auto]: T, [K.secretProviderClassAuto]: F },
    expected: 'NO',
  },
  {
    rule: 'D5: another type\'s "false" does not veto',
    w: { [K.auto]: T, [K.secretAuto]: F },
    expected: 'AUTO',
  },
  {
    rule: 'D5: empty typed value does not veto',
    w: { [K.auto]: T, [K.configmapAuto]: '' },
    expected: 'AUTO',
  },
  {
    rule: 'D5: typed "false" on PT beats auto on PT',
    pt: { [K.auto]: T, [K.configmapAuto]: F },
    expected: 'NO',
  },

  // Step 7.4: --auto-reload-all.
  { rule: 'all: auto ""', w: { [K.auto]: '' }, all: true, expected: 'AUTO' },
  { rule: 'all: typed ""', w: { [K.configmapAuto]: '' }, all: true, expected: 'AUTO' },
  {
    rule: 'all: auto "" and typed ""',
    w: { [K.auto]: '', [K.configmapAuto]: '' },
    all: true,
    expected: 'AUTO',
  },
  { rule: 'all: auto "false" disables it', w: { [K.auto]: F }, all: true, expected: 'NO' },
  { rule: 'all: auto "yes" disables it', w: { [K.auto]: 'yes' }, all: true, expected: 'NO' },
  { rule: 'all: auto "false" on PT disables it', pt: { [K.auto]: F }, all: true, expected: 'NO' },
  {
    rule: 'all: non-matching list does not disable it',
    w: { [K.configmapReload]: 'other' },
    all: true,
    expected: 'AUTO',
  },
  {
    rule: 'all: search without match does not disable it',
    w: { [K.search]: T },
    all: true,
    expected: 'AUTO',
  },
  {
    rule: 'all: another type\'s "false" does not disable it',
    w: { [K.secretAuto]: F },
    all: true,
    expected: 'AUTO',
  },
  {
    rule: 'all: another type\'s "false" on W still lets PT decide',
    w: { [K.secretAuto]: F },
    pt: { [K.auto]: F },
    all: true,
    expected: 'NO',
  },

  // Step 3: W or PT, chosen per type by presence of the four keys on W.
  { rule: 'PT auto when W has none', pt: { [K.auto]: T }, expected: 'AUTO' },
  { rule: 'PT typed auto when W has none', pt: { [K.configmapAuto]: T }, expected: 'AUTO' },
  { rule: 'PT list when W has none', pt: { [K.configmapReload]: 'cfg' }, expected: 'LIST' },
  {
    rule: 'W auto "false" blocks PT auto',
    w: { [K.auto]: F },
    pt: { [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'W auto "false" blocks a PT list of another type',
    type: 'SECRET',
    w: { [K.auto]: F },
    pt: { [K.secretReload]: 'cfg' },
    expected: 'NO',
  },
  {
    rule: 'W auto "" (present, empty) blocks PT',
    w: { [K.auto]: '' },
    pt: { [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'W typed "" (present, empty) blocks PT',
    w: { [K.configmapAuto]: '' },
    pt: { [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'W search blocks PT list',
    w: { [K.search]: T },
    pt: { [K.configmapReload]: 'cfg' },
    expected: 'NO',
  },
  {
    rule: 'W list of another name blocks PT list',
    w: { [K.configmapReload]: 'other' },
    pt: { [K.configmapReload]: 'cfg' },
    expected: 'NO',
  },
  {
    rule: 'W empty list blocks PT auto',
    w: { [K.configmapReload]: '' },
    pt: { [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'W Secret list does not block PT ConfigMap list',
    w: { [K.secretReload]: 'x' },
    pt: { [K.configmapReload]: 'cfg' },
    expected: 'LIST',
  },
  {
    rule: 'W Secret list does not block PT auto for ConfigMaps',
    w: { [K.secretReload]: 'x' },
    pt: { [K.auto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'W Secret list blocks PT auto for Secrets',
    type: 'SECRET',
    w: { [K.secretReload]: 'x' },
    pt: { [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'W Secret typed "false" does not block PT for ConfigMaps',
    w: { [K.secretAuto]: F },
    pt: { [K.auto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'W SPC list does not block PT for ConfigMaps',
    w: { [K.secretProviderClassReload]: 'x' },
    pt: { [K.auto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'W exclude does not block PT',
    w: { [K.configmapExclude]: 'other' },
    pt: { [K.auto]: T },
    expected: 'AUTO',
  },
  { rule: 'W match does not block PT', w: { [K.match]: T }, pt: { [K.auto]: T }, expected: 'AUTO' },
  {
    rule: 'W ignore does not block PT',
    w: { [K.ignore]: T },
    pt: { [K.auto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'W rollout-strategy / pause-period do not block PT',
    w: { [K.rolloutStrategy]: 'restart', [K.pausePeriod]: '5m' },
    pt: { [K.auto]: T },
    expected: 'AUTO',
  },
  {
    rule: 'W auto wins over PT "false"',
    w: { [K.auto]: T },
    pt: { [K.auto]: F },
    expected: 'AUTO',
  },
  {
    rule: 'W auto wins over PT typed "false" (PT not read)',
    w: { [K.auto]: T },
    pt: { [K.configmapAuto]: F },
    expected: 'AUTO',
  },
  {
    rule: 'PT search + W auto: PT not read',
    w: { [K.auto]: F },
    pt: { [K.search]: T },
    s: { [K.match]: T },
    expected: 'NO',
  },

  // Overridden keys (flags): only the configured keys are read.
  {
    rule: 'overridden auto key is read',
    keys: { ...K, auto: 'example.com/auto' },
    w: { 'example.com/auto': T },
    expected: 'AUTO',
  },
  {
    rule: 'default auto key is not read when overridden',
    keys: { ...K, auto: 'example.com/auto' },
    w: { [K.auto]: T },
    expected: 'NO',
  },
  {
    rule: 'overridden ignore key',
    keys: { ...K, ignore: 'example.com/ignore' },
    w: { [K.auto]: T },
    s: { 'example.com/ignore': T, [K.ignore]: F },
    expected: 'NO',
  },
];

describe('decide (§3.5)', () => {
  it.each(cases)('$rule → $expected', ({ expected, ...c }) => {
    expect(decide(inputOf(c)).result).toBe(expected);
  });

  it('gives the same results with a ReloadListCache', () => {
    const cache = new ReloadListCache();
    for (const { expected, ...c } of cases) {
      expect(decide({ ...inputOf(c), reloadLists: cache }).result, c.rule).toBe(expected);
    }
    expect(cache.size).toBeGreaterThan(0);
  });
});

describe('decide problems (§3.3, §3.4)', () => {
  const problemCases: {
    rule: string;
    c: Omit<Case, 'rule' | 'expected'>;
    expected: AnnotationProblem[];
  }[] = [
    {
      rule: 'valid values',
      c: {
        w: { [K.auto]: T, [K.configmapAuto]: F, [K.search]: F, [K.configmapReload]: 'a,b' },
        s: { [K.ignore]: F, [K.match]: T },
      },
      expected: [],
    },
    {
      rule: 'empty values are not problems',
      c: {
        w: { [K.auto]: '', [K.configmapAuto]: '', [K.search]: '' },
        s: { [K.ignore]: '', [K.match]: '' },
      },
      expected: [],
    },
    {
      rule: 'invalid list element',
      c: { w: { [K.configmapReload]: 'app-(,cfg' } },
      expected: [
        {
          on: 'workload',
          key: K.configmapReload,
          value: 'app-(,cfg',
          problem: 'invalid pattern "app-(" (missing closing ))',
          consequence: 'ignored, other entries still apply',
        },
      ],
    },
    {
      rule: 'invalid list element on PT',
      c: { pt: { [K.configmapReload]: '[a' } },
      expected: [
        {
          on: 'workload',
          key: K.configmapReload,
          value: '[a',
          problem: 'invalid pattern "[a" (missing closing ])',
          consequence: 'ignored, other entries still apply',
        },
      ],
    },
    {
      rule: "invalid list element of another type is not this decision's business",
      c: { w: { [K.secretReload]: 'app-(' } },
      expected: [],
    },
    {
      rule: 'unparsable auto',
      c: { w: { [K.auto]: 'yes' } },
      expected: [
        {
          on: 'workload',
          key: K.auto,
          value: 'yes',
          problem: 'invalid boolean "yes"',
          consequence: 'counts as false',
        },
      ],
    },
    {
      rule: 'unparsable auto under --auto-reload-all',
      c: { w: { [K.auto]: 'yes' }, all: true },
      expected: [
        {
          on: 'workload',
          key: K.auto,
          value: 'yes',
          problem: 'invalid boolean "yes"',
          consequence: 'counts as false, and --auto-reload-all does not apply to this workload',
        },
      ],
    },
    {
      rule: 'unparsable typed auto',
      c: { type: 'SECRET', w: { [K.secretAuto]: ' true' } },
      expected: [
        {
          on: 'workload',
          key: K.secretAuto,
          value: ' true',
          problem: 'invalid boolean " true"',
          consequence: 'counts as false, so Secrets are not reloaded automatically',
        },
      ],
    },
    {
      rule: 'search "True"',
      c: { w: { [K.search]: 'True' } },
      expected: [
        {
          on: 'workload',
          key: K.search,
          value: 'True',
          problem: 'invalid value "True" (only "true" enables it)',
          consequence: 'counts as not set',
        },
      ],
    },
    {
      rule: 'ignore and match "1" on the source',
      c: { s: { [K.ignore]: '1', [K.match]: 'yes' } },
      expected: [
        {
          on: 'source',
          key: K.ignore,
          value: '1',
          problem: 'invalid value "1" (only "true" enables it)',
          consequence: 'counts as not set',
          source: { type: 'CONFIGMAP', name: 'cfg' },
        },
        {
          on: 'source',
          key: K.match,
          value: 'yes',
          problem: 'invalid value "yes" (only "true" enables it)',
          consequence: 'counts as not set',
          source: { type: 'CONFIGMAP', name: 'cfg' },
        },
      ],
    },
    {
      rule: 'values on the unchosen PT are not read',
      c: { w: { [K.auto]: T }, pt: { [K.auto]: 'yes', [K.configmapReload]: '(' } },
      expected: [],
    },
    {
      rule: 'ignore/search on the workload are not exact-checked as S',
      c: { w: { [K.ignore]: 'True', [K.match]: 'True' } },
      expected: [],
    },
    {
      rule: 'reported even when ignore decides first',
      c: { w: { [K.auto]: 'yes' }, s: { [K.ignore]: T } },
      expected: [
        {
          on: 'workload',
          key: K.auto,
          value: 'yes',
          problem: 'invalid boolean "yes"',
          consequence: 'counts as false',
        },
      ],
    },
  ];

  it.each(problemCases)('$rule', ({ c, expected }) => {
    expect(decide(inputOf(c)).problems).toEqual(expected);
  });
});

describe('trackedContainer (Tracked rule of §3.5)', () => {
  const referencing = aWorkload('Deployment', 'ns', 'api')
    .withContainer(aContainer('sidecar'))
    .withContainer(aContainer('app').withVolumeMount('config'))
    .withVolume(configMapVolume('config', 'cfg'));
  const notReferencing = aWorkload('Deployment', 'ns', 'api')
    .withContainer(aContainer('first'))
    .withContainer(aContainer('second'));
  const noContainers = aWorkload('Rollout', 'ns', 'api').withWorkloadRef();

  it.each([
    {
      rule: 'LIST, referenced',
      w: referencing,
      a: { [K.configmapReload]: 'cfg' },
      all: false,
      tracked: true,
      container: 'app',
    },
    {
      rule: 'LIST, not referenced → first container',
      w: notReferencing,
      a: { [K.configmapReload]: 'cfg' },
      all: false,
      tracked: true,
      container: 'first',
    },
    {
      rule: 'LIST, no containers',
      w: noContainers,
      a: { [K.configmapReload]: 'cfg' },
      all: false,
      tracked: true,
      container: undefined,
    },
    {
      rule: 'AUTO, referenced',
      w: referencing,
      a: { [K.auto]: T },
      all: false,
      tracked: true,
      container: 'app',
    },
    {
      rule: 'AUTO, not referenced',
      w: notReferencing,
      a: { [K.auto]: T },
      all: false,
      tracked: false,
      container: undefined,
    },
    {
      rule: 'typed AUTO, not referenced',
      w: notReferencing,
      a: { [K.configmapAuto]: T },
      all: false,
      tracked: false,
      container: undefined,
    },
    {
      rule: 'search AUTO, not referenced',
      w: notReferencing,
      a: { [K.search]: T },
      all: false,
      tracked: false,
      container: undefined,
    },
    {
      rule: 'search AUTO, referenced',
      w: referencing,
      a: { [K.search]: T },
      all: false,
      tracked: true,
      container: 'app',
    },
    {
      rule: 'auto-reload-all, referenced',
      w: referencing,
      a: {},
      all: true,
      tracked: true,
      container: 'app',
    },
    {
      rule: 'auto-reload-all, not referenced',
      w: notReferencing,
      a: {},
      all: true,
      tracked: false,
      container: undefined,
    },
    {
      rule: 'NO, referenced',
      w: referencing,
      a: {},
      all: false,
      tracked: false,
      container: undefined,
    },
  ])('$rule', ({ w, a, all, tracked, container }) => {
    const input: DecideInput = {
      workload: w.withAnnotations(a).build(),
      type: 'CONFIGMAP',
      name: 'cfg',
      sourceAnnotations: { [K.match]: T },
      keys: K,
      autoReloadAll: all,
    };
    expect(trackedContainer(input, decide(input))).toEqual({ tracked, container });
  });
});

describe('hasReloadList (§9.2 (b))', () => {
  it.each([
    { rule: 'none', w: {}, pt: {}, type: 'CONFIGMAP', expected: false },
    { rule: 'on W', w: { [K.configmapReload]: 'a' }, pt: {}, type: 'CONFIGMAP', expected: true },
    { rule: 'on PT', w: {}, pt: { [K.configmapReload]: 'a' }, type: 'CONFIGMAP', expected: true },
    {
      rule: 'on PT although W has auto',
      w: { [K.auto]: T },
      pt: { [K.configmapReload]: 'a' },
      type: 'CONFIGMAP',
      expected: true,
    },
    {
      rule: 'empty list',
      w: { [K.configmapReload]: ' , ' },
      pt: {},
      type: 'CONFIGMAP',
      expected: false,
    },
    {
      rule: 'another type',
      w: { [K.secretReload]: 'a' },
      pt: {},
      type: 'CONFIGMAP',
      expected: false,
    },
    { rule: 'Secret', w: { [K.secretReload]: 'a' }, pt: {}, type: 'SECRET', expected: true },
    {
      rule: 'SPC',
      w: {},
      pt: { [K.secretProviderClassReload]: 'a' },
      type: 'SECRETPROVIDERCLASS',
      expected: true,
    },
    {
      rule: 'only invalid elements still counts',
      w: { [K.configmapReload]: '(' },
      pt: {},
      type: 'CONFIGMAP',
      expected: true,
    },
  ] as const)('$rule → $expected', ({ w, pt, type, expected }) => {
    const workload = aWorkload('Deployment', 'ns', 'api')
      .withAnnotations(w)
      .withTemplateAnnotations(pt)
      .build();
    expect(hasReloadList(workload, type, K)).toBe(expected);
  });
});

describe('decide with a ReloadPolicy binding (ADR 0034)', () => {
  const bound = (c: Omit<Case, 'rule' | 'expected'>): DecideInput => ({
    ...inputOf(c),
    boundByPolicy: true,
  });

  it.each<[string, Omit<Case, 'rule' | 'expected'>, DecisionResult, string]>([
    ['no annotations: LIST by the policy', {}, 'LIST', 'policy'],
    ['auto=false does not veto a policy', { w: { [K.auto]: F } }, 'LIST', 'policy'],
    ['ignore on the source still wins', { s: { [K.ignore]: T } }, 'NO', 'source-ignored'],
    ["the workload's exclude still wins", { w: { [K.configmapExclude]: 'cfg' } }, 'NO', 'excluded'],
    [
      "the workload's own reload list names it first",
      { w: { [K.configmapReload]: 'cfg' } },
      'LIST',
      'reload-list',
    ],
  ])('%s', (_title, c, result, rule) => {
    expect(decide(bound(c))).toMatchObject({ result, rule });
  });
});
