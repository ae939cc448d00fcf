// kreload's /metrics as data, and the barrier negative checks wait for: "kreload has received the
// events the test caused and has nothing pending or in flight". Only then does "nothing rolled"
// mean kreload decided not to roll, rather than "not yet".
import { probe } from '../cluster/probes.ts';
import type { KreloadProcess } from './kreload-process.ts';
import { pollUntil } from './poll.ts';

export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescapeLabel(value: string): string {
  return value.replace(/\\(["\\n])/g, (_match, char: string) => (char === 'n' ? '\n' : char));
}

/** Prometheus text exposition format 0.0.4: one sample per non-comment line. */
export function parsePrometheusText(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (match === null) continue;
    const [, name = '', labelText = '', rawValue = ''] = match;
    const labels: Record<string, string> = {};
    for (const pair of labelText.matchAll(LABEL_PAIR)) {
      labels[pair[1] ?? ''] = unescapeLabel(pair[2] ?? '');
    }
    samples.push({ name, labels, value: Number(rawValue) });
  }
  return samples;
}

export class MetricsSnapshot {
  readonly samples: readonly MetricSample[];

  constructor(deps: { samples: readonly MetricSample[] }) {
    this.samples = deps.samples;
  }

  /** Sum over the samples of `name` whose labels include `labels` (0 when there are none). */
  value(name: string, labels: Readonly<Record<string, string>> = {}): number {
    return this.samples
      .filter(
        (sample) =>
          sample.name === name &&
          Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
      )
      .reduce((sum, sample) => sum + sample.value, 0);
  }

  has(name: string): boolean {
    return this.samples.some((sample) => sample.name === name);
  }

  /** How much `name` (with `labels`) grew since `earlier`. */
  delta(
    earlier: MetricsSnapshot,
    name: string,
    labels: Readonly<Record<string, string>> = {},
  ): number {
    return this.value(name, labels) - earlier.value(name, labels);
  }
}

export async function scrapeMetrics(kreload: KreloadProcess): Promise<MetricsSnapshot> {
  const response = await probe({ url: kreload.url('/metrics'), timeoutMs: 5000 });
  if (response.status !== 200) {
    throw new Error(`GET /metrics answered ${response.status}: ${response.body.slice(0, 200)}`);
  }
  return new MetricsSnapshot({ samples: parsePrometheusText(response.body) });
}

export type EventType = 'add' | 'update' | 'delete';

/**
 * `reloader_events_received_total{resource_type, event_type}` must have grown by `atLeast`, summed
 * over `event` when it lists several types, or over all types without it.
 */
export interface ExpectedEvents {
  readonly resource: string;
  readonly event?: EventType | readonly EventType[];
  readonly atLeast: number;
}

function eventTypes(expected: ExpectedEvents): readonly (EventType | undefined)[] {
  if (expected.event === undefined) return [undefined];
  return typeof expected.event === 'string' ? [expected.event] : expected.event;
}

export interface SettleOptions {
  /** Snapshot taken before the action. */
  readonly since: MetricsSnapshot;
  readonly events?: readonly ExpectedEvents[];
  /** `reloader_reconcile_total` must have grown by at least this much (e.g. an initial sync). */
  readonly minReconciles?: number;
  readonly timeoutMs?: number;
}

interface QueueState {
  readonly depth: number;
  readonly started: number;
  readonly finished: number;
  readonly missingEvents: readonly string[];
  readonly reconciles: number;
}

function queueState(now: MetricsSnapshot, options: SettleOptions): QueueState {
  const missingEvents = (options.events ?? [])
    .map((expected) => {
      const grown = eventTypes(expected)
        .map((type) =>
          now.delta(options.since, 'reloader_events_received_total', {
            resource_type: expected.resource,
            ...(type === undefined ? {} : { event_type: type }),
          }),
        )
        .reduce((sum, value) => sum + value, 0);
      const types = eventTypes(expected).join('|') || 'any';
      return grown >= expected.atLeast
        ? ''
        : `${expected.resource} ${types}: ${grown}/${expected.atLeast}`;
    })
    .filter((line) => line !== '');
  return {
    depth: now.value('reloader_workqueue_depth'),
    // A key's processing starts with one workqueue-latency observation and ends with one
    // reconcile count (§13.2), so the difference is what is in flight.
    started: now.value('reloader_workqueue_latency_seconds_count'),
    finished: now.value('reloader_reconcile_total'),
    missingEvents,
    reconciles: now.delta(options.since, 'reloader_reconcile_total'),
  };
}

function isIdle(state: QueueState, options: SettleOptions): boolean {
  return (
    state.missingEvents.length === 0 &&
    state.depth === 0 &&
    state.started === state.finished &&
    state.reconciles >= (options.minReconciles ?? 0)
  );
}

function describeState(state: QueueState): string {
  return (
    `depth ${state.depth}, started ${state.started}, finished ${state.finished}, ` +
    `reconciles since ${state.reconciles}, missing events [${state.missingEvents.join('; ')}]`
  );
}

/**
 * Waits until kreload counted the expected events and its queue is idle in two scrapes in a row
 * with no reconcile in between (a workload update caused by kreload's own patch lands just after
 * the patch, and its reconcile must be over too). Returns the last snapshot.
 */
export async function waitUntilSettled(
  kreload: KreloadProcess,
  options: SettleOptions,
): Promise<MetricsSnapshot> {
  let previous: MetricsSnapshot | undefined;
  let last = 'no scrape yet';
  try {
    return await pollUntil(
      async () => {
        const now = await scrapeMetrics(kreload);
        const state = queueState(now, options);
        last = describeState(state);
        const stable =
          previous !== undefined &&
          isIdle(state, options) &&
          previous.value('reloader_reconcile_total') === state.finished;
        previous = now;
        return stable ? now : undefined;
      },
      {
        timeoutMs: options.timeoutMs ?? 30_000,
        intervalMs: 250,
        describe: 'kreload to count the expected events with an idle queue',
      },
    );
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)} (last: ${last})`, {
      cause: error,
    });
  }
}
