// `kreload explain` for the scoping cases of §11 in global mode (docs/explain.md, issue 13):
// --namespace-selector, --namespaces-to-ignore, --resource-label-selector and
// --resources-to-ignore. For each case the real CLI explains the workload before the change, the
// change is made, and kreload must have done what explain predicted, for the rule explain named.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import { explainJson, type ExplainJson } from '../harness/explain.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import {
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
  type SecretSpec,
  type SourceSpec,
} from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const SCOPE_LABEL = 'e2e.kreload.io/explain-scope';
const WATCHED_LABEL = 'e2e.kreload.io/watched';

function flags(namespaces: readonly string[]): string[] {
  const [selected, , ignored] = namespaces;
  return [
    `--namespace-selector=${SCOPE_LABEL}=${String(selected)}`,
    `--namespaces-to-ignore=${String(ignored)}`,
    `--resource-label-selector=${WATCHED_LABEL}=true`,
    '--resources-to-ignore=secrets',
    '--sync-delay=0',
  ];
}

const fixture = useKreload({
  name: 'explain-scope',
  namespaces: 3,
  args: flags,
  startInBeforeAll: false,
});

const labelled = (name: string, v: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name,
  labels: { [WATCHED_LABEL]: 'true' },
  data: { v },
});
const unlabelled = (name: string, v: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name,
  data: { v },
});
const credentials = (v: string): SecretSpec => ({
  type: 'SECRET',
  name: 'xs-sec',
  labels: { [WATCHED_LABEL]: 'true' },
  data: { v },
});

interface ScopeCase {
  readonly id: string;
  /** Index into the fixture's namespaces: 0 selected, 1 not selected, 2 selected but ignored. */
  readonly namespace: 0 | 1 | 2;
  readonly source: (v: string) => SourceSpec;
  readonly gate?: string;
  readonly because: string;
  readonly change: 'roll' | 'no-roll';
}

const CASES: readonly ScopeCase[] = [
  {
    id: 'watched',
    namespace: 0,
    source: (v) => labelled('xs-watched', v),
    because: 'auto',
    change: 'roll',
  },
  {
    id: 'unlabelled',
    namespace: 0,
    source: (v) => unlabelled('xs-unlabelled', v),
    because: 'resource-label-selector',
    change: 'no-roll',
  },
  {
    id: 'secret',
    namespace: 0,
    source: credentials,
    because: 'resource-type-ignored',
    change: 'no-roll',
  },
  {
    id: 'unselected',
    namespace: 1,
    source: (v) => labelled('xs-unselected', v),
    gate: 'namespace-not-selected',
    because: 'namespace-not-selected',
    change: 'no-roll',
  },
  {
    id: 'ignored',
    namespace: 2,
    source: (v) => labelled('xs-ignored', v),
    gate: 'namespace-ignored',
    because: 'namespace-ignored',
    change: 'no-roll',
  },
];

const strategicMerge = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

function envFromOf(source: SourceSpec) {
  return source.type === 'CONFIGMAP'
    ? { envFrom: [{ configMapRef: { name: source.name } }] }
    : { envFrom: [{ secretRef: { name: source.name } }] };
}

describe('explain predicts the scoping filters (global mode)', () => {
  const explained = new Map<string, ExplainJson>();
  const refs = new Map<string, WorkloadRef>();
  const namespaceOf = (c: ScopeCase) => fixture.namespaces[c.namespace] ?? '';

  beforeAll(async () => {
    const [selected = '', , ignored = ''] = fixture.namespaces;
    const core = fixture.cluster.kc.makeApiClient(CoreV1Api);
    for (const name of [selected, ignored]) {
      await core.patchNamespace(
        { name, body: { metadata: { labels: { [SCOPE_LABEL]: selected } } } },
        strategicMerge,
      );
    }
    await fixture.start();
    for (const c of CASES) {
      const namespace = namespaceOf(c);
      await fixture.sources.create(namespace, c.source('1'));
      refs.set(
        c.id,
        await fixture.workloads.create('Deployment', {
          namespace,
          name: `xs-${c.id}`,
          annotations: { [AUTO]: 'true' },
          podSpec: podSpec({ app: envFromOf(c.source('1')) }),
        }),
      );
    }
    const watched = CASES.filter((c) => c.change === 'roll');
    for (const c of watched) {
      await waitForBaseline(fixture.workloads, refs.get(c.id)!, {
        [sourceKey(c.source('1'))]: sourceHash(c.source('1')),
      });
    }
    for (const c of CASES) {
      await fixture.workloads.settledRevisions(refs.get(c.id)!, 1);
      explained.set(
        c.id,
        await explainJson(fixture.cluster.kubeconfigPath, `deployment/xs-${c.id}`, namespaceOf(c), [
          '--',
          ...flags(fixture.namespaces),
        ]),
      );
    }
    const { kreload } = fixture;
    const before = await scrapeMetrics(kreload);
    for (const c of CASES) await fixture.sources.replace(namespaceOf(c), c.source('2'));
    for (const c of watched) {
      await waitForEnv(fixture.workloads, refs.get(c.id)!, {
        container: APP,
        name: envVarName(c.source('2')),
        value: sourceHash(c.source('2')),
      });
    }
    // The changes kreload receives (labelled ConfigMaps outside the ignored namespace) are in.
    await waitUntilSettled(kreload, {
      since: before,
      events: [{ resource: 'configmaps', event: 'update', atLeast: 2 }],
    });
  }, 180_000);

  it.each(CASES.map((c) => ({ ...c, label: c.id })))('$label', async (c) => {
    const report = explained.get(c.id);
    expect(report?.config.kind).toBe('flags');
    expect(report?.workload?.gate).toBe(c.gate);
    const source = report?.workload?.sources.find((s) => s.key === sourceKey(c.source('1')));
    expect(source, `explain lists ${sourceKey(c.source('1'))}`).toBeDefined();
    expect(source?.because).toBe(c.because);
    expect(source?.predicts.change).toBe(c.change);
    const { revisions } = await fixture.workloads.settledRevisions(
      refs.get(c.id)!,
      c.change === 'roll' ? 2 : 1,
    );
    expect(revisions === 2 ? 'roll' : 'no-roll', 'what kreload did vs explain').toBe(c.change);
  });
});
