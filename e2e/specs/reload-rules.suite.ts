// Runs SCENARIOS × WORKLOAD_KINDS against one kreload in three phases, so ~90 workloads cost one
// wait each rather than one per test: (1) create every source and workload and wait until kreload
// has seen them all (first sight); (2) apply every row's changes at once and wait until kreload
// counted them with an idle queue; (3) one test per row and phase asserts the exact objects.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BASELINE,
  IGNORE,
  LAST_RELOADED_FROM,
  SOURCE_HASHES,
  baselineAfterRoll,
  baselineAnnotation,
  omitKeys,
  stateJson,
} from '../harness/annotations.ts';
import {
  eventReasonsEventually,
  parseLastReloadedFrom,
  reloadedMessage,
  waitForBaselines,
  waitForRecord,
  workloadsReloadedMessage,
} from '../harness/expectations.ts';
import type { KreloadFixture } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled, type MetricsSnapshot } from '../harness/metrics.ts';
import {
  applySourceChange,
  envVarName,
  sourceHash,
  sourceKey,
  watchEventsOf,
  type SourceRef,
} from '../harness/sources.ts';
import {
  WORKLOAD_KINDS,
  viewOfSpec,
  type ContainerView,
  type WorkloadKindRow,
  type WorkloadRef,
  type WorkloadSpec,
  type WorkloadView,
} from '../harness/workloads.ts';
import {
  SCENARIOS,
  type Scenario,
  type ScenarioCase,
  type Strategy,
} from './reload-rules.table.ts';

interface Row {
  readonly label: string;
  readonly kind: WorkloadKindRow;
  readonly base: string;
  readonly scenario: ScenarioCase;
}

function rowsFor(strategy: Strategy, scenarios: readonly Scenario[]): Row[] {
  return scenarios
    .filter((s) => s.strategies?.includes(strategy) ?? true)
    .flatMap((s) =>
      WORKLOAD_KINDS.filter((k) => s.kinds?.includes(k.kind) ?? true).map((kind) => {
        const base = `${kind.short}-${s.id}`;
        return { label: `${kind.kind} ${s.id}: ${s.title}`, kind, base, scenario: s.build(base) };
      }),
    );
}

function specOf(namespace: string, row: Row): WorkloadSpec {
  const { annotations, templateAnnotations, podSpec } = row.scenario;
  return {
    namespace,
    name: row.base,
    podSpec,
    ...(annotations === undefined ? {} : { annotations }),
    ...(templateAnnotations === undefined ? {} : { templateAnnotations }),
  };
}

interface ExpectedAfter {
  readonly annotations: Record<string, string>;
  readonly templateAnnotations: Record<string, string>;
  readonly containers: readonly ContainerView[];
}

/** The tracked keys and their hashes once the changes happened. */
function trackedAfter(scenario: ScenarioCase): Record<string, string> {
  return {
    ...scenario.firstSight,
    ...Object.fromEntries(
      scenario.rolls.map((roll) => [sourceKey(roll.source), sourceHash(roll.source)]),
    ),
  };
}

function pick(map: Readonly<Record<string, string>>, keys: readonly string[]) {
  return Object.fromEntries(Object.entries(map).filter(([key]) => keys.includes(key)));
}

/**
 * Whether W holds B (docs/adr/0046): a W created with `kreload.io/baseline` (even malformed) keeps
 * it there; any other W's first-sight baseline goes to the baseline store.
 */
function ownsBaseline(created: Pick<WorkloadView, 'annotations'>): boolean {
  return created.annotations[BASELINE] !== undefined;
}

/**
 * §5.3/§5.6/§6: the W annotations, PT annotations and env vars a row must end with; `held`: the
 * store held the workload's record before the change.
 */
function expectedAfter(
  strategy: Strategy,
  row: Row,
  namespace: string,
  held: boolean,
): ExpectedAfter {
  const { scenario } = row;
  const created = viewOfSpec(specOf(namespace, row));
  const annotations = omitKeys(created.annotations, [BASELINE]);
  const inW = ownsBaseline(created);
  const rolledBaseline = (rest: Readonly<Record<string, string>>) =>
    inW ? baselineAnnotation(rest) : baselineAfterRoll(rest, held);
  if (scenario.rolls.length === 0) {
    return {
      annotations: inW
        ? { ...annotations, ...baselineAnnotation(scenario.baselineAfter ?? scenario.firstSight) }
        : created.annotations,
      templateAnnotations: { ...created.templateAnnotations },
      containers: created.containers,
    };
  }
  const tracked = trackedAfter(scenario);
  const template = omitKeys(created.templateAnnotations, scenario.replacedTemplateKeys ?? []);
  if (strategy === 'annotations') {
    // Every tracked key with a known hash moves into source-hashes; last-reloaded-from is
    // checked on its own (observedAt is a time).
    return {
      annotations: { ...annotations, ...rolledBaseline({}) },
      templateAnnotations: { ...template, [SOURCE_HASHES]: stateJson(tracked) },
      containers: created.containers,
    };
  }
  const group = scenario.collisionGroup ?? [];
  const rolledKeys = scenario.rolls.map((roll) => sourceKey(roll.source));
  return {
    annotations: {
      ...annotations,
      ...rolledBaseline(omitKeys(tracked, [...rolledKeys, ...group])),
    },
    templateAnnotations: {
      ...template,
      ...(group.length === 0 ? {} : { [SOURCE_HASHES]: stateJson(pick(tracked, group)) }),
    },
    containers: created.containers.map((container) => ({
      name: container.name,
      env: {
        ...container.env,
        ...Object.fromEntries(
          scenario.rolls
            .filter((roll) => roll.container === container.name)
            .map((roll) => [envVarName(roll.source), sourceHash(roll.source)]),
        ),
      },
    })),
  };
}

function sourceObject(source: SourceRef, namespace: string) {
  return {
    kind: source.type === 'CONFIGMAP' ? 'ConfigMap' : 'Secret',
    namespace,
    name: source.name,
  };
}

function expectedWorkloadReasons(strategy: Strategy, scenario: ScenarioCase): string[] {
  const reasons = (scenario.events ?? [])
    .filter((event) => event.on === 'workload')
    .filter((event) => event.strategies?.includes(strategy) ?? true)
    .map((event) => event.reason);
  if (scenario.rolls.length > 0) reasons.push('Reloaded');
  return [...new Set(reasons)].sort();
}

/** Waits for the baselines the table expects; a timeout is left for the per-row tests to report. */
async function waitForFirstSight(fixture: KreloadFixture, rows: readonly Row[]): Promise<void> {
  const pending = rows.filter((row) => Object.keys(row.scenario.firstSight).length > 0);
  await waitForBaselines(
    fixture.workloads,
    pending.map((row) => refOf(fixture, row)),
    { lenient: true },
  );
}

function refOf(fixture: KreloadFixture, row: Row): WorkloadRef {
  return { kind: row.kind.kind, namespace: fixture.namespace, name: row.base };
}

/** Defines a scenario table's tests for one kreload (started by the file with `strategy`). */
export function defineReloadRuleTable(
  fixture: KreloadFixture,
  strategy: Strategy,
  options: { readonly scenarios?: readonly Scenario[]; readonly title?: string } = {},
): void {
  const rows = rowsFor(strategy, options.scenarios ?? SCENARIOS);
  const firstSight = new Map<string, WorkloadView>();
  /** The baseline store's record of each workload at first sight. */
  const firstRecords = new Map<string, string | undefined>();
  let changedAtSeconds = 0;
  let createdSince: MetricsSnapshot;
  let afterCreation: MetricsSnapshot;
  let beforeChanges: MetricsSnapshot;
  let afterChanges: MetricsSnapshot;

  describe(`${options.title ?? 'annotation rules and references'} (${strategy})`, () => {
    beforeAll(async () => {
      const { namespace, kreload } = fixture;
      const beforeCreation = await scrapeMetrics(kreload);
      await Promise.all(
        rows.flatMap((row) =>
          row.scenario.sources.map((source) => fixture.sources.create(namespace, source)),
        ),
      );
      await Promise.all(
        rows.map((row) => fixture.workloads.create(row.kind.kind, specOf(namespace, row))),
      );
      await waitForFirstSight(fixture, rows);
      afterCreation = await waitUntilSettled(kreload, {
        since: beforeCreation,
        events: WORKLOAD_KINDS.map((kind) => ({
          resource: kind.resource,
          event: ['add', 'update'] as const,
          atLeast: rows.filter((row) => row.kind === kind).length,
        })),
        timeoutMs: 60_000,
      });
      createdSince = beforeCreation;
      // kube-controller-manager must have made each workload's first revision from the original
      // template before the change: a roll that overtakes a busy controller leaves one revision,
      // which the per-row checks would count as a missing roll.
      await Promise.all(
        rows.map((row) => fixture.workloads.settledRevisions(refOf(fixture, row), 1)),
      );
      for (const row of rows) {
        const view = await fixture.workloads.read(refOf(fixture, row));
        firstSight.set(row.base, view);
        const ref = refOf(fixture, row);
        firstRecords.set(row.base, await fixture.workloads.baselines.recordOf(ref, view.uid));
      }

      beforeChanges = await scrapeMetrics(kreload);
      changedAtSeconds = Math.floor(Date.now() / 1000);
      const changes = rows.flatMap((row) => row.scenario.changes);
      await Promise.all(
        changes.map((change) => applySourceChange(fixture.sources, namespace, change)),
      );
      afterChanges = await waitUntilSettled(kreload, {
        since: beforeChanges,
        events: watchEventsOf(changes),
        timeoutMs: 60_000,
      });
    }, 240_000);

    it.each(rows)('$label — first sight writes only the baseline', (row) => {
      const { kind, scenario } = row;
      const view = firstSight.get(row.base);
      const created = viewOfSpec(specOf(fixture.namespace, row));
      const tracks = Object.keys(scenario.firstSight).length > 0;
      // The baseline goes to the store: nothing is written to W, unless W holds B already.
      const wroteBaseline = tracks && ownsBaseline(created);
      expect(view?.annotations).toEqual(
        ownsBaseline(created)
          ? {
              ...omitKeys(created.annotations, [BASELINE]),
              ...baselineAnnotation(scenario.firstSight),
            }
          : created.annotations,
      );
      expect(firstRecords.get(row.base), 'the baseline store record').toBe(
        tracks && !ownsBaseline(created) ? stateJson(scenario.firstSight) : undefined,
      );
      expect(view?.templateAnnotations).toEqual(created.templateAnnotations);
      expect(view?.containers).toEqual(created.containers);
      expect(view?.initContainers).toEqual(created.initContainers);
      expect(view?.generation).toBe(wroteBaseline && kind.annotationChangeBumpsGeneration ? 2 : 1);
    });

    it.each(rows)('$label — after the change', async (row) => {
      const { namespace } = fixture;
      const ref = refOf(fixture, row);
      const before = firstSight.get(row.base);
      const rolled = row.scenario.rolls.length > 0;
      const held = firstRecords.get(row.base) !== undefined;
      const expected = expectedAfter(strategy, row, namespace, held);

      const evidence = await fixture.workloads.settledRevisions(ref, rolled ? 2 : 1);
      const after = await fixture.workloads.read(ref);
      expect(after.containers).toEqual(expected.containers);
      expect(after.initContainers).toEqual(before?.initContainers);
      expect(omitKeys(after.templateAnnotations, [LAST_RELOADED_FROM])).toEqual(
        omitKeys(expected.templateAnnotations, [LAST_RELOADED_FROM]),
      );
      expect(after.annotations).toEqual(expected.annotations);
      expect(after.paused).toBe(false);
      if (!ownsBaseline(viewOfSpec(specOf(namespace, row)))) {
        // A roll moves B into W and removes the record; otherwise the record is B.
        const baseline = row.scenario.baselineAfter ?? row.scenario.firstSight;
        const kept = !rolled && Object.keys(baseline).length > 0;
        await waitForRecord(fixture.workloads, ref, after, kept ? baseline : undefined);
      }

      const [roll] = row.scenario.rolls;
      if (strategy === 'annotations' && roll !== undefined) {
        const observedAt = parseLastReloadedFrom(after.templateAnnotations[LAST_RELOADED_FROM], {
          type: roll.source.type,
          name: roll.source.name,
          namespace,
          hash: sourceHash(roll.source),
          container: roll.container,
        });
        expect(observedAt, after.templateAnnotations[LAST_RELOADED_FROM]).toBeGreaterThanOrEqual(
          changedAtSeconds - 1,
        );
        expect(observedAt).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
      } else {
        expect(after.templateAnnotations[LAST_RELOADED_FROM]).toBe(
          expected.templateAnnotations[LAST_RELOADED_FROM],
        );
      }

      const baselineMoved =
        before?.annotations[BASELINE] !== after.annotations[BASELINE] &&
        row.kind.annotationChangeBumpsGeneration;
      const step = rolled || baselineMoved ? 1 : 0;
      expect(after.generation, 'metadata.generation').toBe((before?.generation ?? 0) + step);
      expect(evidence.revisions, 'template revisions').toBe(rolled ? 2 : 1);
    });

    it.each(rows)('$label — Events', async (row) => {
      const { namespace } = fixture;
      const { scenario } = row;
      const ref = refOf(fixture, row);
      const workload = { kind: ref.kind, namespace, name: ref.name };
      const expected = expectedWorkloadReasons(strategy, scenario);
      // Soft: the workload's, the roll's and the source's Events are independent findings.
      expect
        .soft(await eventReasonsEventually(fixture.events, workload, expected), 'on the workload')
        .toEqual(expected);

      const [roll] = scenario.rolls;
      if (roll !== undefined) {
        const messages = (await fixture.events.about(workload)).map((event) => event.message);
        expect.soft(messages).toContain(reloadedMessage(roll.source, ref));
        // A change that rolled its one workload gets no summary on the source (§13.3): the
        // workload's Reloaded above names the source.
        const onSource = sourceObject(roll.source, namespace);
        const sourceMessages = (await fixture.events.about(onSource)).map((e) => e.message);
        expect
          .soft(sourceMessages)
          .not.toContain(
            workloadsReloadedMessage({ ...roll.source, hash: sourceHash(roll.source) }, [ref]),
          );
      }
      for (const event of scenario.events ?? []) {
        if (event.on === 'workload') continue;
        const object = sourceObject(event.on, namespace);
        expect
          .soft(
            await eventReasonsEventually(fixture.events, object, [event.reason]),
            `on ${object.kind} ${object.name}`,
          )
          .toContain(event.reason);
      }
    });

    it('counts each created workload as a received `add` event (§13.2)', () => {
      const added = Object.fromEntries(
        WORKLOAD_KINDS.map((kind) => [
          kind.resource,
          afterCreation.delta(createdSince, 'reloader_events_received_total', {
            resource_type: kind.resource,
            event_type: 'add',
          }),
        ]),
      );
      expect(added).toEqual(
        Object.fromEntries(
          WORKLOAD_KINDS.map((kind) => [
            kind.resource,
            rows.filter((row) => row.kind === kind).length,
          ]),
        ),
      );
    });

    it('counts one successful roll per rolled row, unchanged hashes and ignored sources as skips', () => {
      const rolledRows = rows.filter((row) => row.scenario.rolls.length > 0).length;
      const metadataOnly = rows.flatMap((row) =>
        row.scenario.changes.filter((change) => change.op === 'metadata'),
      ).length;
      const ignoredSourceChanges = rows
        .filter((row) => row.scenario.sources.some((s) => s.annotations?.[IGNORE] === 'true'))
        .flatMap((row) => row.scenario.changes).length;
      const delta = (name: string, labels: Record<string, string> = {}) =>
        afterChanges.delta(beforeChanges, name, labels);
      expect({
        rollsSucceeded: delta('reloader_reload_executed_total', { success: 'true' }),
        rollsFailed: delta('reloader_reload_executed_total', { success: 'false' }),
        noDataChange: delta('reloader_skipped_total', { reason: 'no_data_change' }),
        ignored: delta('reloader_skipped_total', { reason: 'ignored_or_not_selected' }),
        errors: delta('reloader_errors_total'),
      }).toEqual({
        rollsSucceeded: rolledRows,
        rollsFailed: 0,
        noDataChange: metadataOnly,
        ignored: ignoredSourceChanges,
        errors: 0,
      });
    });
  });
}
