import { dumpYaml } from '@kubernetes/client-node';
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import { describe, expect, it } from 'vitest';
import { parseOptions } from '../config/parse-options.ts';
import { sourceKey } from '../core/keys.ts';
import type { SourceKey, WorkloadView } from '../core/types.ts';
import { BASELINE, DEFAULT_ANNOTATION_KEYS as K, SOURCE_HASHES } from '../core/types.ts';
import {
  aConfigMap,
  aContainer,
  aSecret,
  aWorkload,
  configMapVolume,
  csiVolume,
} from '../testing/builders.ts';
import type { ReloadPolicyView } from '../core/reload-policy.ts';
import { bindingOfWorkload } from '../core/reload-policy.ts';
import { aPolicy } from '../testing/policies.ts';
import type { PolicyKnowledge, SourceRead } from './explain-workload.ts';
import { explainWorkload } from './explain-workload.ts';
import { explainSource } from './explain-source.ts';
import type { ExplainReason, SourceExplanation, Verdict, WorkloadExplanation } from './model.ts';
import { ASSUMPTIONS, REASONS, VERDICTS } from './model.ts';
import { renderReport, verdictText } from './render.ts';

const NS = 'shop';
const CFG = sourceKey('CONFIGMAP', 'cfg');
const HASH = 'a'.repeat(40);
const OTHER_HASH = 'b'.repeat(40);

const withCfg = (builder: ReturnType<typeof aWorkload>) =>
  builder.withContainer(aContainer('app').withEnvFrom('configmap', 'cfg'));

const deployment = () => withCfg(aWorkload('Deployment', NS, 'api'));

function present(annotations: Record<string, string> = {}, hash = HASH): SourceRead {
  let builder = aConfigMap(NS, 'cfg').withHash(hash);
  for (const [key, value] of Object.entries(annotations))
    builder = builder.withAnnotation(key, value);
  return { state: 'present', view: builder.build() };
}

interface Case {
  readonly name: string;
  readonly workload: WorkloadView;
  readonly flags?: readonly string[];
  readonly reads?: ReadonlyMap<SourceKey, SourceRead>;
  readonly namespaceSelected?: boolean;
  readonly key?: SourceKey;
  readonly because: ExplainReason;
  readonly verdict: Verdict;
  /** What the ReloadPolicies give the workload (docs/reload-policy.md). */
  readonly policies?: (view: WorkloadView) => PolicyKnowledge;
}

/** The binding the controller computes for the workload among these policies. */
const boundBy =
  (...policies: readonly ReloadPolicyView[]) =>
  (view: WorkloadView): PolicyKnowledge => ({
    state: 'known',
    binding: bindingOfWorkload(view, policies, () => [], K),
  });
const cfgPolicy = (name: string, extra: Partial<ReloadPolicyView> = {}) =>
  aPolicy(NS, name, {
    sources: [{ kind: 'CONFIGMAP', name: 'cfg' }],
    targets: [{ kind: 'Deployment', name: 'api' }],
    ...extra,
  });
const policiesUnreadable = (): PolicyKnowledge => ({ state: 'unknown', why: 'forbidden' });

const cfgReads = (read: SourceRead = present()) => new Map([[CFG, read]]);

const CASES: readonly Case[] = [
  {
    name: 'ignore on the source',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    reads: cfgReads(present({ [K.ignore]: 'true' })),
    because: 'source-ignored',
    verdict: 'no-roll',
  },
  {
    name: 'exclude list',
    workload: deployment()
      .withAnnotations({ [K.auto]: 'true', [K.configmapExclude]: 'cfg' })
      .build(),
    because: 'excluded',
    verdict: 'no-roll',
  },
  {
    name: 'reload list',
    workload: deployment().withAnnotation(K.configmapReload, 'c.g').build(),
    because: 'reload-list',
    verdict: 'first-sight',
  },
  {
    name: 'bound by a ReloadPolicy, no annotation',
    workload: deployment().build(),
    policies: boundBy(cfgPolicy('p1')),
    because: 'policy',
    verdict: 'first-sight',
  },
  {
    name: 'bound by a suspended ReloadPolicy only',
    workload: deployment().build(),
    policies: boundBy(cfgPolicy('p1', { suspend: true })),
    because: 'not-annotated',
    verdict: 'no-roll',
  },
  {
    name: 'a policy targeting another workload',
    workload: deployment().build(),
    policies: boundBy(cfgPolicy('p1', { targets: [{ kind: 'Deployment', name: 'web' }] })),
    because: 'not-annotated',
    verdict: 'no-roll',
  },
  {
    name: 'policies unreadable, no annotation',
    workload: deployment().build(),
    policies: policiesUnreadable,
    because: 'policies-unreadable',
    verdict: 'cannot-tell',
  },
  {
    name: 'policies unreadable, excluded by the workload',
    workload: deployment()
      .withAnnotations({ [K.auto]: 'true', [K.configmapExclude]: 'cfg' })
      .build(),
    policies: policiesUnreadable,
    because: 'excluded',
    verdict: 'no-roll',
  },
  {
    name: 'policies unreadable, auto tracks it anyway',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    policies: policiesUnreadable,
    because: 'auto',
    verdict: 'first-sight',
  },
  {
    name: 'search + match',
    workload: deployment().withAnnotation(K.search, 'true').build(),
    reads: cfgReads(present({ [K.match]: 'true' })),
    because: 'search-match',
    verdict: 'first-sight',
  },
  {
    name: 'typed auto veto',
    workload: deployment()
      .withAnnotations({ [K.auto]: 'true', [K.configmapAuto]: 'false' })
      .build(),
    because: 'typed-auto-off',
    verdict: 'no-roll',
  },
  {
    name: 'typed auto',
    workload: deployment().withAnnotation(K.configmapAuto, 'true').build(),
    because: 'typed-auto',
    verdict: 'first-sight',
  },
  {
    name: 'auto, baseline equal to the current hash',
    workload: deployment()
      .withAnnotations({ [K.auto]: 'true', [BASELINE]: JSON.stringify({ [CFG]: HASH }) })
      .build(),
    because: 'auto',
    verdict: 'rolls-on-change',
  },
  {
    name: 'auto, changed since the baseline',
    workload: deployment()
      .withAnnotations({ [K.auto]: 'true', [BASELINE]: JSON.stringify({ [CFG]: OTHER_HASH }) })
      .build(),
    because: 'auto',
    verdict: 'pending-roll',
  },
  {
    name: '--auto-reload-all',
    workload: deployment().build(),
    flags: ['--auto-reload-all'],
    because: 'auto-reload-all',
    verdict: 'first-sight',
  },
  {
    name: 'auto false',
    workload: deployment().withAnnotation(K.auto, 'false').build(),
    because: 'auto-off',
    verdict: 'no-roll',
  },
  {
    name: 'search without match',
    workload: deployment().withAnnotation(K.search, 'true').build(),
    because: 'search-without-match',
    verdict: 'no-roll',
  },
  {
    name: 'no annotation',
    workload: deployment().build(),
    because: 'not-annotated',
    verdict: 'no-roll',
  },
  {
    name: 'ignored workload type',
    workload: withCfg(aWorkload('Job', NS, 'once'))
      .withAnnotation(K.auto, 'true')
      .build(),
    flags: ['--ignored-workload-types=jobs'],
    because: 'workload-type-ignored',
    verdict: 'no-roll',
  },
  {
    name: 'Argo Rollouts off',
    workload: withCfg(aWorkload('Rollout', NS, 'ro'))
      .withAnnotation(K.auto, 'true')
      .build(),
    because: 'argo-rollouts-disabled',
    verdict: 'no-roll',
  },
  {
    name: 'namespace not in --namespaces',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    flags: ['--namespaces=elsewhere'],
    because: 'namespace-not-watched',
    verdict: 'no-roll',
  },
  {
    name: '--namespaces-to-ignore',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    flags: [`--namespaces-to-ignore=${NS}`],
    because: 'namespace-ignored',
    verdict: 'no-roll',
  },
  {
    name: '--namespace-selector does not select it',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    flags: ['--namespace-selector=team=a'],
    namespaceSelected: false,
    because: 'namespace-not-selected',
    verdict: 'no-roll',
  },
  {
    name: 'Job owned by a CronJob',
    workload: withCfg(aWorkload('Job', NS, 'nightly-1'))
      .withAnnotation(K.auto, 'true')
      .withController({ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'u' })
      .build(),
    because: 'controlled-by-cronjob',
    verdict: 'no-roll',
  },
  {
    name: '--resources-to-ignore',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    flags: ['--resources-to-ignore=configmaps'],
    because: 'resource-type-ignored',
    verdict: 'no-roll',
  },
  {
    name: 'CSI integration off',
    workload: aWorkload('Deployment', NS, 'api')
      .withContainer(aContainer('app').withVolumeMount('vault'))
      .withVolume(csiVolume('vault', 'spc'))
      .withAnnotation(K.auto, 'true')
      .build(),
    key: sourceKey('SECRETPROVIDERCLASS', 'spc'),
    reads: new Map([[sourceKey('SECRETPROVIDERCLASS', 'spc'), { state: 'absent' }]]),
    because: 'csi-integration-disabled',
    verdict: 'no-roll',
  },
  {
    name: '--resource-label-selector',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    flags: ['--resource-label-selector=reload=yes'],
    reads: cfgReads({ ...present(), unwatched: 'resource-label-selector' } as SourceRead),
    because: 'resource-label-selector',
    verdict: 'no-roll',
  },
  {
    name: 'Helm release Secret',
    workload: aWorkload('Deployment', NS, 'api')
      .withContainer(aContainer('app').withEnvFrom('secret', 'sh.helm.release.v1.x.v1'))
      .withAnnotation(K.auto, 'true')
      .build(),
    key: sourceKey('SECRET', 'sh.helm.release.v1.x.v1'),
    reads: new Map([
      [
        sourceKey('SECRET', 'sh.helm.release.v1.x.v1'),
        {
          state: 'present',
          view: aSecret(NS, 'sh.helm.release.v1.x.v1').build(),
          unwatched: 'secret-type-not-watched',
        },
      ],
    ]),
    because: 'secret-type-not-watched',
    verdict: 'no-roll',
  },
  {
    name: 'webhook mode',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    flags: ['--webhook-url=https://hooks.example.com/x'],
    because: 'webhook-mode',
    verdict: 'no-roll',
  },
  {
    name: 'dry run',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    flags: ['--dry-run'],
    because: 'dry-run',
    verdict: 'no-roll',
  },
  {
    name: 'auto, volume mounted by no container',
    workload: aWorkload('Deployment', NS, 'api')
      .withContainer(aContainer('app'))
      .withVolume(configMapVolume('unused', 'cfg'))
      .withAnnotation(K.auto, 'true')
      .build(),
    because: 'not-referenced',
    verdict: 'no-roll',
  },
  {
    name: 'Rollout with workloadRef has no container',
    workload: aWorkload('Rollout', NS, 'ro')
      .withWorkloadRef()
      .withAnnotation(K.configmapReload, 'cfg')
      .build(),
    flags: ['--is-Argo-Rollouts=true'],
    because: 'no-container',
    verdict: 'no-roll',
  },
  {
    name: 'a listed source that does not exist',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    reads: cfgReads({ state: 'absent' }),
    because: 'auto',
    verdict: 'missing',
  },
  {
    name: 'forbidden source',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    reads: cfgReads({ state: 'forbidden' }),
    because: 'source-forbidden',
    verdict: 'cannot-tell',
  },
  {
    name: 'unreadable source',
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    reads: new Map(),
    because: 'source-unreadable',
    verdict: 'cannot-tell',
  },
  {
    name: "the controller's cache of the type is not healthy",
    workload: deployment().withAnnotation(K.auto, 'true').build(),
    reads: cfgReads({ state: 'unhealthy' }),
    because: 'source-cache-unhealthy',
    verdict: 'cannot-tell',
  },
];

function caseNamed(name: string): Case {
  const found = CASES.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no case ${name}`);
  return found;
}

const AUTO_UP_TO_DATE = 'auto, baseline equal to the current hash';

async function explainCase(c: Case): Promise<WorkloadExplanation> {
  const options = await parseOptions(c.flags ?? [], {});
  const reads = c.reads ?? cfgReads();
  return explainWorkload({
    view: c.workload,
    row: BUILT_IN_KIND_TABLE.row(c.workload.ref.kind),
    kinds: BUILT_IN_KIND_TABLE,
    sites: new Map(),
    options,
    namespaceSelected: c.namespaceSelected,
    sources: reads,
    candidates: { CONFIGMAP: [...reads.keys()].map((key) => key.split('/')[1] ?? '') },
    now: Date.parse('2026-06-01T00:00:00Z'),
    policies: c.policies?.(c.workload),
  });
}

function sourceOf(explanation: WorkloadExplanation, key: SourceKey): SourceExplanation {
  const source = explanation.sources.find((candidate) => candidate.key === key);
  if (source === undefined) throw new Error(`no ${key} in ${JSON.stringify(explanation)}`);
  return source;
}

describe('explainWorkload: every reason', () => {
  it.each(CASES)('$name → $verdict because $because', async (c) => {
    const explanation = await explainCase(c);
    const source = sourceOf(explanation, c.key ?? CFG);
    expect({ verdict: source.verdict, because: source.because }).toEqual({
      verdict: c.verdict,
      because: c.because,
    });
    const table = renderReport(
      {
        config: { kind: 'flags', args: [...(c.flags ?? [])] },
        assumptions: ASSUMPTIONS,
        workload: explanation,
      },
      'table',
    );
    expect(table).toContain(verdictText(source));
  });

  it('has a row for every reason and every verdict', () => {
    const reasons = new Set(CASES.map((c) => c.because));
    expect([...reasons].sort()).toEqual(Object.keys(REASONS).sort());
    expect([...new Set(CASES.map((c) => c.verdict))].sort()).toEqual(Object.keys(VERDICTS).sort());
  });
});

describe('explainWorkload: state and predictions', () => {
  it('names the snapshot a workload with config revisions runs (docs/adr/0036)', async () => {
    const workload = deployment()
      .withAnnotation(K.auto, 'true')
      .withTemplateAnnotation('kreload.io/snapshots', `{"${CFG}":"cfg-aaaaaaaaaa"}`)
      .build();
    const explanation = await explainCase({ ...CASES[0]!, reads: cfgReads(), workload });
    expect(sourceOf(explanation, CFG).snapshot).toBe('cfg-aaaaaaaaaa');
    const table = renderReport(
      { config: { kind: 'flags', args: [] }, assumptions: ASSUMPTIONS, workload: explanation },
      'table',
    );
    expect(table).toContain('runs snapshot cfg-aaaaaaaaaa');
  });

  it('reads the applied hash from the env var and predicts a roll on change', async () => {
    const view = aWorkload('Deployment', NS, 'api')
      .withContainer(
        aContainer('app')
          .withEnvFrom('configmap', 'cfg')
          .withStakaterEnv('STAKATER_CFG_CONFIGMAP', HASH),
      )
      .withAnnotation(K.auto, 'true')
      .build();
    const source = sourceOf(
      await explainCase({ ...caseNamed(AUTO_UP_TO_DATE), workload: view }),
      CFG,
    );
    expect(source).toMatchObject({
      applied: { hash: HASH, from: 'env var' },
      stateRule: 'R2',
      verdict: 'rolls-on-change',
      container: 'app',
      predicts: { change: 'roll', delete: 'no-roll', create: 'no-roll' },
    });
  });

  it('predicts a roll on delete only with --reload-on-delete, and names the pod-template state', async () => {
    const view = deployment()
      .withAnnotation(K.auto, 'true')
      .withTemplateAnnotation(SOURCE_HASHES, JSON.stringify({ [CFG]: OTHER_HASH }))
      .build();
    const explanation = await explainCase({
      name: '',
      workload: view,
      flags: ['--reload-on-delete=true'],
      because: 'auto',
      verdict: 'pending-roll',
    });
    expect(sourceOf(explanation, CFG)).toMatchObject({
      applied: { hash: OTHER_HASH, from: 'pod template kreload.io/source-hashes' },
      stateRule: 'R3',
      verdict: 'pending-roll',
      predicts: { change: 'roll', delete: 'roll' },
    });
  });

  it('reports malformed annotations, collisions and the matched list element', async () => {
    const view = aWorkload('Deployment', NS, 'api')
      .withContainer(
        aContainer('app').withEnvFrom('configmap', 'c-a').withEnvFrom('configmap', 'c.a'),
      )
      .withAnnotations({ [K.configmapReload]: 'app-(, c[-.]a', [BASELINE]: '{"configmap/x":' })
      .build();
    const reads = new Map<SourceKey, SourceRead>([
      [
        sourceKey('CONFIGMAP', 'c-a'),
        { state: 'present', view: aConfigMap(NS, 'c-a').withHash(HASH).build() },
      ],
      [
        sourceKey('CONFIGMAP', 'c.a'),
        { state: 'present', view: aConfigMap(NS, 'c.a').withHash(HASH).build() },
      ],
    ]);
    const explanation = await explainCase({
      name: '',
      workload: view,
      reads,
      because: 'reload-list',
      verdict: 'first-sight',
    });
    expect(sourceOf(explanation, sourceKey('CONFIGMAP', 'c-a')).decision.matchedElement).toBe(
      'c[-.]a',
    );
    expect(explanation.facts.collisions).toEqual([
      { envVar: 'STAKATER_C_A_CONFIGMAP', keys: ['configmap/c-a', 'configmap/c.a'] },
    ]);
    expect(explanation.problems.map((p) => p.key).sort()).toEqual(
      [BASELINE, K.configmapReload].sort(),
    );
  });

  it('explains a source query: who rolls and who does not', async () => {
    const rolls = await explainCase(caseNamed(AUTO_UP_TO_DATE));
    const ignored = await explainCase(caseNamed('no annotation'));
    const query = explainSource(CFG, NS, [rolls, { ...ignored, name: 'worker' }]);
    expect(query.rolls.map((usage) => usage.name)).toEqual(['api']);
    expect(query.doesNotRoll.map((usage) => [usage.name, usage.source.because])).toEqual([
      ['worker', 'not-annotated'],
    ]);
    const text = renderReport(
      { config: { kind: 'defaults', note: 'test' }, assumptions: [], source: query },
      'table',
    );
    expect(text).toContain('Deployment/worker');
  });

  it('names a roll by eviction, and the one under way (docs/adr/0044)', async () => {
    const view = aWorkload('Deployment', NS, 'api')
      .withContainer(aContainer('app').withEnvFrom('configmap', 'cfg'))
      .withAnnotation(K.auto, 'true')
      .withAnnotation('kreload.io/rollout-strategy', 'evict')
      .withAnnotation('kreload.io/source-hashes', `{"${CFG}":"${HASH}"}`)
      .withAnnotation('kreload.io/evict-before', '2026-06-01T00:00:00Z')
      .build();
    const workload = await explainCase({ ...caseNamed(AUTO_UP_TO_DATE), workload: view });
    expect(workload.facts).toMatchObject({
      rollAction: 'evict-pods',
      strategy: 'workload',
      evicting: { before: '2026-06-01T00:00:00Z' },
    });
    const text = renderReport(
      { config: { kind: 'flags', args: [] }, assumptions: ASSUMPTIONS, workload },
      'table',
    );
    expect(text).toContain('rolls by: pod eviction, state in: workload');
    expect(text).toContain(
      'pod eviction in progress: pods created at or before 2026-06-01T00:00:00Z still run an older config',
    );
  });

  it("shows the running controller's eviction progress, the hold and its next try", async () => {
    const view = aWorkload('Deployment', NS, 'api')
      .withContainer(aContainer('app').withEnvFrom('configmap', 'cfg'))
      .withAnnotation(K.auto, 'true')
      .withAnnotation('kreload.io/rollout-strategy', 'evict')
      .withAnnotation('kreload.io/source-hashes', `{"${CFG}":"${HASH}"}`)
      .withAnnotation('kreload.io/evict-before', '2026-06-01T00:00:00Z')
      .build();
    const options = await parseOptions([], {});
    const reads = cfgReads();
    const pdb = "Cannot evict pod as it would violate the pod's disruption budget.";
    const workload = explainWorkload({
      view,
      row: BUILT_IN_KIND_TABLE.row('Deployment'),
      kinds: BUILT_IN_KIND_TABLE,
      sites: new Map(),
      options,
      namespaceSelected: undefined,
      sources: reads,
      candidates: { CONFIGMAP: ['cfg'] },
      now: Date.parse('2026-06-01T00:00:10Z'),
      controller: {
        marks: [],
        facts: () => ({ status: { state: 'present', hash: HASH, uid: 'u', annotations: {} } }),
        leading: true,
        queue: { state: 'idle' },
        eviction: {
          progress: { old: 2, current: 1, desired: 3 },
          held: { reason: pdb, retryAt: Date.parse('2026-06-01T00:00:14Z') },
        },
      },
    });
    expect(workload.facts.evicting).toEqual({
      before: '2026-06-01T00:00:00Z',
      progress: { replaced: 1, total: 3 },
      held: { reason: pdb, retryAt: '2026-06-01T00:00:14.000Z' },
    });
    const text = renderReport(
      { config: { kind: 'flags', args: [] }, assumptions: ASSUMPTIONS, workload },
      'table',
    );
    expect(text).toContain('rolls by: pod eviction');
    expect(text).toContain('progress: 1/3 pods replaced');
    expect(text).toContain(`eviction held: ${pdb}; next try at 2026-06-01T00:00:14.000Z`);
  });

  it.each([
    {
      where: 'the store record',
      annotations: {},
      stored: { raw: `{"${CFG}":"${OTHER_HASH}"}`, object: 'kreload-system/kreload-baselines-x-0' },
      baselineIn: 'kreload-system/kreload-baselines-x-0',
      line: 'baseline in: ConfigMap kreload-system/kreload-baselines-x-0 (the baseline store)',
      verdict: 'pending-roll',
    },
    {
      where: "W's own baseline, which wins over a record",
      annotations: { [BASELINE]: `{"${CFG}":"${HASH}"}` },
      stored: { raw: `{"${CFG}":"${OTHER_HASH}"}`, object: 'kreload-system/kreload-baselines-x-0' },
      baselineIn: 'workload',
      line: 'baseline in: the workload (kreload.io/baseline)',
      verdict: 'rolls-on-change',
    },
    {
      where: 'no baseline anywhere yet',
      annotations: {},
      stored: { raw: undefined, object: undefined },
      baselineIn: undefined,
      line: undefined,
      verdict: undefined,
    },
  ])('says where B lives and reads it from there: $where', async (row) => {
    let builder = aWorkload('Deployment', NS, 'api')
      .withContainer(aContainer('app').withEnvFrom('configmap', 'cfg'))
      .withAnnotation(K.auto, 'true');
    for (const [key, value] of Object.entries(row.annotations)) {
      builder = builder.withAnnotation(key, value);
    }
    const workload = explainWorkload({
      view: builder.build(),
      row: BUILT_IN_KIND_TABLE.row('Deployment'),
      kinds: BUILT_IN_KIND_TABLE,
      sites: new Map(),
      options: await parseOptions([], {}),
      namespaceSelected: undefined,
      sources: cfgReads(),
      candidates: { CONFIGMAP: ['cfg'] },
      now: Date.parse('2026-06-01T00:00:10Z'),
      controller: {
        marks: [],
        facts: () => ({ status: { state: 'present', hash: HASH, uid: 'u', annotations: {} } }),
        leading: true,
        queue: { state: 'idle' },
      },
      storedBaseline: row.stored,
    });
    expect(workload.facts.baselineIn).toBe(row.baselineIn);
    const source = sourceOf(workload, CFG);
    if (row.verdict !== undefined) expect(source.verdict).toBe(row.verdict);
    const text = renderReport(
      { config: { kind: 'flags', args: [] }, assumptions: ASSUMPTIONS, workload },
      'table',
    );
    if (row.line === undefined) expect(text).not.toContain('baseline in:');
    else expect(text).toContain(row.line);
  });

  it('renders JSON and YAML with the same content', async () => {
    const workload = await explainCase(caseNamed(AUTO_UP_TO_DATE));
    const report = {
      config: { kind: 'flags' as const, args: [] },
      assumptions: ASSUMPTIONS,
      workload,
    };
    expect(JSON.parse(renderReport(report, 'json'))).toEqual(JSON.parse(JSON.stringify(report)));
    expect(renderReport(report, 'yaml', (value) => dumpYaml(value))).toContain(
      'verdict: rolls-on-change',
    );
  });
});

describe('explainWorkload: the rollout (the CLI judges the current one)', () => {
  const base = {
    name: 'rollout',
    because: 'auto',
    verdict: 'rolls-on-change',
  } as const satisfies Partial<Case>;

  it('a Deployment whose new ReplicaSet missed its progress deadline: failed, with the reason', async () => {
    const workload: WorkloadView = {
      ...deployment().withAnnotation(K.auto, 'true').build(),
      generation: 4,
      rolloutStatus: {
        model: 'replica-set',
        observedGeneration: 4,
        desired: 3,
        replicas: 4,
        updated: 1,
        available: 3,
        unavailable: 1,
        progressing: { status: 'False', reason: 'ProgressDeadlineExceeded' },
      },
    };
    const explained = await explainCase({ ...base, workload });
    expect(explained.facts.rollout).toEqual({
      of: 'current',
      generation: 4,
      state: 'failed',
      reason: 'ProgressDeadlineExceeded',
      detail: 'progress deadline passed with 1 of 3 replicas updated, 3 available',
    });
    expect(
      renderReport(
        { config: { kind: 'defaults', note: '' }, assumptions: [], workload: explained },
        'table',
      ),
    ).toContain(
      'current rollout (generation 4): failed (ProgressDeadlineExceeded): progress deadline passed',
    );
  });

  it('a Job has no rollout to show', async () => {
    const workload = withCfg(aWorkload('Job', NS, 'api'))
      .withAnnotation(K.auto, 'true')
      .build();
    expect((await explainCase({ ...base, workload })).facts.rollout).toBeUndefined();
  });
});

describe('explainWorkload: holds on the planned roll', () => {
  const NIGHTLY = '{"timezone":"UTC","windows":[{"cron":"0 2 * * *","duration":"1h"}]}';
  // The baseline differs from the current hash: the plan rolls (R5).
  const owed = () =>
    deployment()
      .withAnnotation(K.auto, 'true')
      .withAnnotation(BASELINE, `{"${CFG}":"${OTHER_HASH}"}`)
      .withAnnotation('reloader.stakater.com/restart-window', NIGHTLY)
      .withAnnotation('kreload.io/pending-roll', `{"${CFG}":"${HASH}"}`)
      .build();
  const held = {
    name: 'held',
    key: CFG,
    because: 'auto',
    verdict: 'rolls-on-change',
    flags: ['--enable-restart-windows'],
  } as const satisfies Partial<Case>;

  it('outside the window: the hold, when it ends, and the pending changes', async () => {
    const explained = await explainCase({ ...held, workload: owed() });
    expect(explained.facts.holds).toEqual([
      {
        reason: 'window',
        detail: 'outside the restart windows; the next window opens at 2026-06-01T02:00:00Z',
        until: '2026-06-01T02:00:00.000Z',
      },
    ]);
    expect(explained.facts.pendingRoll).toEqual([CFG]);
    const text = renderReport(
      { config: { kind: 'defaults', note: '' }, assumptions: [], workload: explained },
      'table',
    );
    expect(text).toContain(
      'held (window): outside the restart windows; the next window opens at 2026-06-01T02:00:00Z; ends at 2026-06-01T02:00:00.000Z',
    );
    expect(text).toContain(`pending roll (kreload.io/pending-roll): ${CFG}`);
  });

  it('without --enable-restart-windows the hold has no end of its own', async () => {
    const explained = await explainCase({ ...held, flags: [], workload: owed() });
    expect(explained.facts.holds?.map((hold) => [hold.reason, hold.until])).toEqual([
      ['windows_off', undefined],
    ]);
  });
});
