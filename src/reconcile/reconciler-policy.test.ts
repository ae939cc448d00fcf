// A ReloadPolicy is one more input of the same reconcile (docs/reload-policy.md, ADR 0034): the
// exact writes for a workload that carries no kreload annotation and does not reference the source.
import { beforeEach, describe, expect, it } from 'vitest';
import { workloadKey } from '../core/keys.ts';
import type { SourceView, WorkloadView } from '../core/types.ts';
import { BASELINE, DEFAULT_ANNOTATION_KEYS as KEYS, SOURCE_HASHES } from '../core/types.ts';
import { driven } from '../testing/attempt-driver.ts';
import { aConfigMap, aContainer, aWorkload } from '../testing/builders.ts';
import { InMemorySources } from '../testing/in-memory-sources.ts';
import { InMemoryWorkloads } from '../testing/in-memory-workloads.ts';
import { aPolicy, policyStoreOver } from '../testing/policies.ts';
import { DEFAULT_RECONCILE_OPTIONS } from '../testing/reconcile-options.ts';
import { RecordingObserver } from '../testing/recording-observer.ts';
import { RecordingWriter } from '../testing/recording-writer.ts';
import { MarkStore } from '../watch/marks.ts';
import { POLICY_STATE_BUDGET_BYTES } from './plan/policy-budget.ts';
import type { PolicyStore } from '../watch/policy-store.ts';
import type { ReconcileOptions } from './reconciler.ts';
import { Reconciler } from './reconciler.ts';

const NS = 'team-a';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const NOW = 1_767_225_600_000;
const CM = 'configmap/app-config';

/** No kreload annotation, no reference to app-config: only a policy can bind it. */
const WEB = aWorkload('Deployment', NS, 'web')
  .withResourceVersion('10')
  .withContainer(aContainer('app'));
const KEY = workloadKey(WEB.build().ref);
const BY_NAME = aPolicy(NS, 'web-config', {
  sources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
  targets: [{ kind: 'Deployment', name: 'web' }],
});

let sources: InMemorySources;
let sourceList: SourceView[];
let workloads: InMemoryWorkloads;
let workloadList: WorkloadView[];
let writer: RecordingWriter;
let policies: PolicyStore;

function reconciler(options: Partial<ReconcileOptions> = {}) {
  return driven(
    new Reconciler({
      workloads,
      sources,
      policies,
      marks: new MarkStore(),
      writer,
      observer: new RecordingObserver(),
      options: { ...DEFAULT_RECONCILE_OPTIONS, ...options },
      now: () => NOW,
      random: () => 0.5,
    }),
  );
}

function given(view: WorkloadView): void {
  workloads.put(view);
  writer.put(view);
  workloadList = [view];
}

function setSource(view: SourceView): void {
  sources.put(view);
  sourceList = [...sourceList.filter((known) => known.ref.name !== view.ref.name), view];
}

function bodies(): unknown[] {
  return writer.writes.map((write) => (write.verb === 'patch' ? write.patch.body : write.verb));
}

beforeEach(() => {
  sources = new InMemorySources();
  sourceList = [];
  workloads = new InMemoryWorkloads();
  workloadList = [];
  writer = new RecordingWriter();
  policies = policyStoreOver({ sources: () => sourceList, workloads: () => workloadList });
  setSource(aConfigMap(NS, 'app-config').withHash(H1).build());
});

describe('Reconciler with ReloadPolicies', () => {
  it('without a policy the workload tracks nothing and nothing is written', async () => {
    given(WEB.build());
    policies.replace([]);
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'unchanged' });
    expect(bodies()).toEqual([]);
  });

  it('first sight under a policy: a baseline of the bound source, no roll', async () => {
    given(WEB.build());
    policies.replace([BY_NAME]);
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'baselined' });
    expect(bodies()).toEqual([
      { metadata: { resourceVersion: '10', annotations: { [BASELINE]: `{"${CM}":"${H1}"}` } } },
    ]);
  });

  it('a change of the bound source: env var on the first container (env-vars)', async () => {
    given(WEB.withAnnotation(BASELINE, `{"${CM}":"${H1}"}`).build());
    policies.replace([BY_NAME]);
    setSource(aConfigMap(NS, 'app-config').withHash(H2).build());
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'rolled' });
    expect(bodies()).toEqual([
      {
        metadata: { resourceVersion: '10', annotations: { [BASELINE]: null } },
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'app', env: [{ name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: H2 }] },
              ],
            },
          },
        },
      },
    ]);
  });

  it("the policy's strategy annotations overrides --reload-strategy", async () => {
    given(WEB.withAnnotation(BASELINE, `{"${CM}":"${H1}"}`).build());
    policies.replace([{ ...BY_NAME, strategy: 'annotations' }]);
    setSource(aConfigMap(NS, 'app-config').withHash(H2).build());
    await reconciler({ strategy: 'env-vars' }).reconcile(KEY);
    const [body] = bodies() as [{ spec: { template: { metadata: { annotations: object } } } }];
    expect(body.spec.template.metadata.annotations).toMatchObject({
      [SOURCE_HASHES]: `{"${CM}":"${H2}"}`,
    });
  });

  it('a selector target and a selector source bind by labels', async () => {
    given({ ...WEB.withAnnotation(BASELINE, `{"${CM}":"${H1}"}`).build(), labels: { app: 'web' } });
    setSource({ ...aConfigMap(NS, 'app-config').withHash(H2).build(), labels: { team: 'web' } });
    policies.replace([
      aPolicy(NS, 'by-labels', {
        sources: [
          { kind: 'CONFIGMAP', selector: { matchLabels: { team: 'web' }, matchExpressions: [] } },
        ],
        targets: [
          {
            kind: 'Deployment',
            selector: {
              matchLabels: {},
              matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }],
            },
          },
        ],
      }),
    ]);
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'rolled' });
  });

  it('thousands of selector-bound sources: tracked up to the annotation budget, and said', async () => {
    given({ ...WEB.build(), labels: { app: 'web' } });
    const many = Array.from({ length: 4000 }, (_, i) => ({
      ...aConfigMap(NS, `shared-config-${String(i).padStart(4, '0')}`)
        .withHash(H1)
        .build(),
      labels: { team: 'web' },
    }));
    for (const view of many) setSource(view);
    policies.replace([
      aPolicy(NS, 'everything', {
        sources: [
          { kind: 'CONFIGMAP', selector: { matchLabels: { team: 'web' }, matchExpressions: [] } },
        ],
        targets: [
          { kind: 'Deployment', selector: { matchLabels: { app: 'web' }, matchExpressions: [] } },
        ],
      }),
    ]);
    const observer = new RecordingObserver();
    const attempt = driven(
      new Reconciler({
        workloads,
        sources,
        policies,
        marks: new MarkStore(),
        writer,
        observer,
        options: DEFAULT_RECONCILE_OPTIONS,
        now: () => NOW,
        random: () => 0.5,
      }),
    );
    expect(await attempt.reconcile(KEY)).toMatchObject({ outcome: 'baselined' });
    const [body] = bodies() as [{ metadata: { annotations: Record<string, string> } }];
    const baseline = body.metadata.annotations[BASELINE] ?? '';
    expect(baseline.length).toBeGreaterThan(32 * 1024);
    expect(baseline.length).toBeLessThanOrEqual(POLICY_STATE_BUDGET_BYTES);
    const problems = observer.calls.flatMap((call) =>
      call.hook === 'onProblems' ? call.event.problems : [],
    );
    expect(problems).toContainEqual(
      expect.objectContaining({ key: BASELINE, reason: 'TooManySources' }),
    );
    expect(problems[0]?.consequence).toMatch(
      /^the first \d+ by kind and name are tracked; changes to the other \d+ do not roll this workload$/,
    );
  });

  it.each([
    ['suspended', { ...BY_NAME, suspend: true }],
    [
      'targeting another workload',
      { ...BY_NAME, targets: [{ kind: 'Deployment' as const, name: 'other' }] },
    ],
    [
      'targeting another kind',
      { ...BY_NAME, targets: [{ kind: 'StatefulSet' as const, name: 'web' }] },
    ],
  ])('a policy %s binds nothing: the change rolls nothing', async (_title, policy) => {
    given(WEB.withAnnotation(BASELINE, `{"${CM}":"${H1}"}`).build());
    policies.replace([policy]);
    setSource(aConfigMap(NS, 'app-config').withHash(H2).build());
    await reconciler().reconcile(KEY);
    expect(bodies().some((body) => JSON.stringify(body).includes('STAKATER'))).toBe(false);
  });

  it("the workload's exclude annotation wins over a policy", async () => {
    given(
      WEB.withAnnotation(BASELINE, `{"${CM}":"${H1}"}`)
        .withAnnotation(KEYS.configmapExclude, 'app-config')
        .build(),
    );
    policies.replace([BY_NAME]);
    setSource(aConfigMap(NS, 'app-config').withHash(H2).build());
    await reconciler().reconcile(KEY);
    expect(bodies().some((body) => JSON.stringify(body).includes('STAKATER'))).toBe(false);
  });

  it('deleting the policy rolls nothing afterwards, even for a later change', async () => {
    given(WEB.withAnnotation(BASELINE, `{"${CM}":"${H1}"}`).build());
    policies.replace([BY_NAME]);
    policies.remove(BY_NAME);
    setSource(aConfigMap(NS, 'app-config').withHash(H2).build());
    await reconciler().reconcile(KEY);
    expect(bodies().some((body) => JSON.stringify(body).includes('STAKATER'))).toBe(false);
  });
});
