// `kreload explain` against the real control plane (docs/explain.md): for every row of the
// reload-rules table (Deployment, env-vars), the real CLI explains the workload before the change,
// the change is made, and kreload must have done exactly what explain predicted: roll or no roll,
// for the rule explain named. Plus scope, `--from`, and bad input (unknown kind, missing object, a
// source the user may not read).
import { beforeAll, describe, expect, it } from 'vitest';
import { AUTO, BASELINE, PAUSE_PERIOD } from '../harness/annotations.ts';
import { installCustomIdentity } from '../harness/identity.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import {
  askController,
  explainJson as explainAs,
  runExplain,
  type ExplainJson,
  type ExplainedSource,
} from '../harness/explain.ts';
import type { FinishedRun } from '../harness/kreload-runs.ts';
import { waitUntilSettled, scrapeMetrics } from '../harness/metrics.ts';
import { waitForBaselines } from '../harness/expectations.ts';
import { PollTimeoutError } from '../harness/poll.ts';
import { KRELOAD_NAMESPACE } from '../harness/rbac.ts';
import {
  applySourceChange,
  sourceHash,
  sourceKey,
  watchEventsOf,
  type SourceChange,
  type SourceRef,
} from '../harness/sources.ts';
import { podSpec, type WorkloadRef } from '../harness/workloads.ts';
import { SCENARIOS, configMap, envFrom, secret, type ScenarioCase } from './reload-rules.table.ts';

/** The deciding rule explain must name for the changed source of each table row. */
const EXPECTED_RULE: Readonly<Record<string, string>> = {
  envfrom: 'auto',
  valuefrom: 'auto',
  volume: 'auto',
  projected: 'auto',
  init: 'auto',
  'secret-bytes': 'auto',
  binary: 'auto',
  'one-mib': 'auto',
  'typed-auto': 'typed-auto',
  'typed-auto-other': 'not-annotated',
  'pt-fallback': 'auto',
  'auto-false': 'auto-off',
  'list-regex': 'reload-list',
  'list-unref': 'reload-list',
  'secret-list': 'reload-list',
  'list-anchored': 'not-annotated',
  'search-match': 'search-match',
  'search-nomatch': 'search-without-match',
  ignore: 'source-ignored',
  'ignore-inexact': 'auto',
  exclude: 'excluded',
  'auto-yes': 'auto-off',
  'typed-unparsable': 'typed-auto-off',
  'search-inexact': 'not-annotated',
  unannotated: 'not-annotated',
  missing: 'auto',
  deleted: 'auto',
  'label-only': 'auto',
  noop: 'auto',
  'two-sources': 'auto',
  collision: 'auto',
  'bad-baseline': 'auto',
  'bad-pause': 'auto',
};

const fixture = useKreload({
  name: 'explain',
  namespaces: 2,
  args: ([watched]) => [`--namespaces=${String(watched)}`, '--sync-delay=0'],
});

function controllerArgs(): string[] {
  return [`--namespaces=${fixture.namespace}`, '--sync-delay=0'];
}

function explain(
  args: readonly string[],
  options: { kubeconfig?: string } = {},
): Promise<FinishedRun> {
  return runExplain(options.kubeconfig ?? fixture.cluster.kubeconfigPath, args);
}

function explainJson(target: string, namespace: string, tail: readonly string[] = []) {
  return explainAs(fixture.cluster.kubeconfigPath, target, namespace, tail);
}

/** A few CLI processes at a time: the machine is shared. */
async function inBatches<T, R>(items: readonly T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += 3) {
    results.push(...(await Promise.all(items.slice(start, start + 3).map(run))));
  }
  return results;
}

function changedSource(change: SourceChange): SourceRef {
  return change.op === 'replace' || change.op === 'create' ? change.spec : change.source;
}

/** explain's prediction for the row's change. A metadata-only update keeps the hash: no roll. */
function predictionFor(change: SourceChange, source: ExplainedSource): string {
  switch (change.op) {
    case 'replace':
      return source.predicts.change;
    case 'create':
      return source.predicts.create;
    case 'delete':
      return source.predicts.delete;
    case 'metadata':
      return 'no-roll';
  }
}

interface Row {
  readonly id: string;
  readonly ref: WorkloadRef;
  readonly scenario: ScenarioCase;
}

const ROWS: readonly Row[] = SCENARIOS.filter(
  (s) => (s.kinds?.includes('Deployment') ?? true) && (s.strategies?.includes('env-vars') ?? true),
).map((s) => {
  const base = `dep-${s.id}`;
  return {
    id: s.id,
    ref: { kind: 'Deployment', namespace: '', name: base },
    scenario: s.build(base),
  };
});

describe('explain predicts what kreload does, for every row of the reload-rules table', () => {
  const before = new Map<string, ExplainJson>();
  const after = new Map<string, ExplainJson>();
  const revisions = new Map<string, number>();

  const refOf = (row: Row): WorkloadRef => ({ ...row.ref, namespace: fixture.namespace });

  beforeAll(async () => {
    const { namespace, sources, workloads, kreload } = fixture;
    for (const row of ROWS) {
      await Promise.all(row.scenario.sources.map((source) => sources.create(namespace, source)));
    }
    await Promise.all(
      ROWS.map((row) =>
        workloads.create('Deployment', {
          namespace,
          name: row.ref.name,
          podSpec: row.scenario.podSpec,
          ...(row.scenario.annotations === undefined
            ? {}
            : { annotations: row.scenario.annotations }),
          ...(row.scenario.templateAnnotations === undefined
            ? {}
            : { templateAnnotations: row.scenario.templateAnnotations }),
        }),
      ),
    );
    const tracking = ROWS.filter((row) => Object.keys(row.scenario.firstSight).length > 0);
    await waitForBaselines(workloads, tracking.map(refOf), { timeoutMs: 90_000 });
    await Promise.all(ROWS.map((row) => workloads.settledRevisions(refOf(row), 1)));

    const explained = await inBatches(ROWS, (row) =>
      explainJson(`deployment/${row.ref.name}`, namespace, ['--', ...controllerArgs()]),
    );
    ROWS.forEach((row, index) => before.set(row.id, explained[index]!));

    const changes = ROWS.flatMap((row) => row.scenario.changes);
    const since = await scrapeMetrics(kreload);
    await Promise.all(changes.map((change) => applySourceChange(sources, namespace, change)));
    await waitUntilSettled(kreload, { since, events: watchEventsOf(changes), timeoutMs: 90_000 });
    for (const row of ROWS) {
      const rolls = row.scenario.rolls.length > 0;
      try {
        const evidence = await workloads.settledRevisions(refOf(row), rolls ? 2 : 1, 30_000);
        revisions.set(row.id, evidence.revisions);
      } catch (error) {
        if (!(error instanceof PollTimeoutError)) throw error;
        revisions.set(row.id, -1);
      }
    }
    const again = await inBatches(ROWS, (row) =>
      explainJson(`deployment/${row.ref.name}`, namespace, ['--', ...controllerArgs()]),
    );
    ROWS.forEach((row, index) => after.set(row.id, again[index]!));
  }, 600_000);

  it('has an expected rule for every table row', () => {
    expect(ROWS.filter((row) => EXPECTED_RULE[row.id] === undefined).map((row) => row.id)).toEqual(
      [],
    );
  });

  it.each(ROWS.map((row) => ({ ...row, label: row.id })))('$label', (row) => {
    const explained = before.get(row.id);
    const [change] = row.scenario.changes;
    if (change === undefined) throw new Error(`row ${row.id} has no change`);
    const key = sourceKey(changedSource(change));
    const source = explained?.workload?.sources.find((s) => s.key === key);
    expect(source, `explain lists ${key}`).toBeDefined();
    if (source === undefined) return;
    expect(explained?.config.kind).toBe('flags');
    expect(source.decision.rule).toBe(EXPECTED_RULE[row.id]);
    const original = row.scenario.sources.find((spec) => sourceKey(spec) === key);
    expect(source.currentHash).toBe(original === undefined ? undefined : sourceHash(original));

    const predicted = predictionFor(change, source);
    const rolled = revisions.get(row.id) === 2;
    expect(rolled ? 'roll' : 'no-roll', 'what kreload did vs what explain predicted').toBe(
      predicted,
    );
    // Explain and the table agree too.
    expect(predicted).toBe(row.scenario.rolls.length > 0 ? 'roll' : 'no-roll');

    const later = after.get(row.id)?.workload?.sources.find((s) => s.key === key);
    if (change.op === 'metadata') expect(later?.currentHash).toBe(source.currentHash);
    // After its roll the workload carries the new hash: up to date, and the next change rolls.
    if (rolled) expect(later).toMatchObject({ verdict: 'rolls-on-change', stateRule: 'R2' });
  });

  // The shipped default keeps a never-rolled workload's baseline in the store, not in W: explain,
  // reading the cluster itself, plans with it as the controller does (docs/explain.md).
  it('reads the baselines of never-rolled workloads from the baseline store', () => {
    const stored = ROWS.filter(
      (row) =>
        Object.keys(row.scenario.firstSight).length > 0 &&
        row.scenario.annotations?.[BASELINE] === undefined,
    );
    expect(stored.length).toBeGreaterThan(10);
    for (const row of stored) {
      const explained = before.get(row.id)?.workload;
      expect(explained?.facts.baselineIn, row.id).toMatch(
        new RegExp(`^${KRELOAD_NAMESPACE}/kreload-baselines-[0-9a-f]{16}-\\d+$`),
      );
      for (const [key, hash] of Object.entries(row.scenario.firstSight)) {
        expect(explained?.sources.find((s) => s.key === key)?.baseline, `${row.id} ${key}`).toBe(
          hash,
        );
      }
    }
  });

  it('reports malformed annotations (auto-yes, list-regex, bad-pause)', () => {
    const keysOf = (id: string) => before.get(id)?.workload?.problems.map((p) => p.key) ?? [];
    expect(keysOf('auto-yes')).toContain(AUTO);
    expect(keysOf('list-regex')).toContain('configmap.reloader.stakater.com/reload');
    // bad-baseline is gone by then: kreload rewrote the baseline at first sight.
    expect(keysOf('bad-pause')).toContain(PAUSE_PERIOD);
    expect(keysOf('bad-baseline')).not.toContain(BASELINE);
  });

  it('explains a source: who rolls and who does not', async () => {
    const ignore = ROWS.find((row) => row.id === 'unannotated');
    const cfg = ignore?.scenario.sources[0];
    if (cfg === undefined) throw new Error('no unannotated row');
    const query = await explainJson(`configmap/${cfg.name}`, fixture.namespace, [
      '--',
      ...controllerArgs(),
    ]);
    expect(query.source?.rolls).toEqual([]);
    expect(query.source?.doesNotRoll.map((u) => [u.name, u.source.because])).toEqual([
      ['dep-unannotated', 'not-annotated'],
    ]);
  });
});

describe('explain: scope and configuration', () => {
  it('a workload outside --namespaces: explain says not watched, and kreload does not roll it', async () => {
    const { sources, workloads } = fixture;
    const other = fixture.namespaces[1] ?? '';
    const source = configMap('outside-cfg');
    await sources.create(other, source);
    const ref = await workloads.create('Deployment', {
      namespace: other,
      name: 'outside',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: envFrom(source.name) }),
    });
    await workloads.settledRevisions(ref, 1);
    const explained = await explainJson('deployment/outside', other, ['--', ...controllerArgs()]);
    expect(explained.workload?.gate).toBe('namespace-not-watched');
    expect(explained.workload?.sources[0]?.predicts.change).toBe('no-roll');

    await sources.replace(other, { ...source, data: { changed: 'yes' } });
    // Nothing will happen, so no event can be waited for: a short, bounded look.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await workloads.settledRevisions(ref, 1)).revisions).toBe(1);
  });

  it('--from reads the options of a kreload Deployment and says so', async () => {
    const { namespace, workloads } = fixture;
    const other = fixture.namespaces[1] ?? '';
    await workloads.create('Deployment', {
      namespace,
      name: 'kreload',
      podSpec: {
        containers: [
          {
            name: 'kreload',
            image: 'registry.invalid/kreload:0',
            args: [`--namespaces=${other}`],
          },
        ],
      },
    });
    const explained = await explainJson('deployment/dep-envfrom', namespace, [
      '--from',
      `${namespace}/kreload`,
    ]);
    expect(explained.config).toEqual({ kind: 'deployment', namespace, name: 'kreload' });
    expect(explained.workload?.gate).toBe('namespace-not-watched');
  });
});

describe('explain: bad input', () => {
  it('GET /debug/explain is off by default: a 404 like any unknown path', async () => {
    const reply = await askController(fixture.kreload, {
      kind: 'Deployment',
      namespace: fixture.namespace,
      name: 'dep-envfrom',
    });
    expect(reply.status).toBe(404);
  });

  it('an unknown kind is a usage error (exit 2)', async () => {
    const run = await explain(['widget/x', '-n', fixture.namespace]);
    expect({ code: run.code, stderr: run.stderr }).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown kind "widget"') as unknown,
    });
  });

  it('a missing workload exits 3', async () => {
    const run = await explain([
      'deployment/nope',
      '-n',
      fixture.namespace,
      '--',
      ...controllerArgs(),
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('not found');
  });

  it('a Secret the user may not read: "cannot tell", never "not referenced" (exit 4)', async () => {
    const { namespace, sources, workloads } = fixture;
    const credentials = secret('explain-forbidden-sec');
    await sources.create(namespace, credentials);
    await workloads.create('Deployment', {
      namespace,
      name: 'explain-forbidden',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ secretRef: { name: credentials.name } }] } }),
    });
    const viewer = await installCustomIdentity(fixture.cluster, {
      name: 'kreload-explain-no-secrets',
      rules: [
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
        { apiGroups: [''], resources: ['configmaps', 'namespaces'], verbs: ['get', 'list'] },
      ],
    });
    const run = await explain(
      ['deployment/explain-forbidden', '-n', namespace, '-o', 'json', '--', ...controllerArgs()],
      { kubeconfig: viewer.kubeconfigPath },
    );
    expect(run.code, run.stderr).toBe(4);
    const source = (JSON.parse(run.stdout) as ExplainJson).workload?.sources.find(
      (s) => s.key === sourceKey(credentials),
    );
    expect(source).toMatchObject({ verdict: 'cannot-tell', because: 'source-forbidden' });
    expect(source?.predicts).toEqual({ change: 'unknown', delete: 'unknown', create: 'unknown' });
  });

  it('a baseline store the user may not list: one line says so, the rest is explained', async () => {
    const { namespace, sources, workloads } = fixture;
    const config = configMap('explain-no-store-cfg');
    await sources.create(namespace, config);
    const ref = await workloads.create('Deployment', {
      namespace,
      name: 'explain-no-store',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: envFrom(config.name) }),
    });
    await waitForBaselines(workloads, [ref]);
    const viewer = await installCustomIdentity(fixture.cluster, {
      name: 'kreload-explain-no-store',
      rules: [
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] },
        { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get'] },
      ],
    });
    const target = ['deployment/explain-no-store', '-n', namespace, '--', ...controllerArgs()];
    const run = await explain(target, { kubeconfig: viewer.kubeconfigPath });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const notes = run.stdout.split('\n').filter((line) => line.includes('baseline store'));
    expect(notes).toEqual([
      expect.stringContaining(
        `the baseline store (ConfigMaps in ${KRELOAD_NAMESPACE}) could not be read (forbidden): ` +
          'a workload kreload never rolled shows no baseline; --via-controller asks the controller',
      ),
    ]);
    expect(run.stdout).toMatch(/configmap\/explain-no-store-cfg .* no state yet/);
  });
});
