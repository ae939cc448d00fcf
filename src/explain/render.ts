/** Renderers of an ExplainReport: a readable table (default), JSON and YAML (`-o json|yaml`). */
import type { RollActionType } from '../rollout/kinds.ts';
import type {
  ConfigOrigin,
  ControllerFacts,
  QueueState,
  ExplainReport,
  HaltFacts,
  PolicyFacts,
  ReferenceSite,
  RolloutFacts,
  ShardFacts,
  SourceExplanation,
  SourceUsage,
  WorkloadExplanation,
} from './model.ts';
import { REASONS, VERDICTS } from './model.ts';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** How wide a table is: `-o wide` prints whole hashes and more columns, as kubectl's does. */
export type TableWidth = 'table' | 'wide';

/** YAML comes from the edge (client-node's dumper), so this module stays free of I/O libraries. */
export type YamlDumper = (value: unknown) => string;

/** Short enough for a table column, long enough to compare with `kreload hash`; whole when wide. */
function hashText(hash: string | undefined, width: TableWidth): string {
  if (hash === undefined) return '-';
  return width === 'wide' ? hash : hash.slice(0, 12);
}

function siteText(site: ReferenceSite): string {
  const where =
    site.container === undefined ? '' : `${site.init ? 'init container ' : ''}${site.container} `;
  const volume = site.volume === undefined ? '' : ` ${site.volume}`;
  return `${where}${site.via}${volume}`;
}

function whereText(source: SourceExplanation): string {
  if (source.references.length === 0) {
    return source.decision.rule === 'policy' ? 'policy only' : 'annotation only';
  }
  return source.references.map(siteText).join(', ');
}

function ruleText(source: SourceExplanation): string {
  const { decision } = source;
  const element = decision.matchedElement === undefined ? '' : ` "${decision.matchedElement}"`;
  // A policy binding reads no annotation of the workload: where they came from does not matter.
  const from =
    decision.annotationsFrom === 'template' && decision.rule !== 'policy' ? ' (pod template)' : '';
  const policies =
    decision.rule === 'policy' && source.policies !== undefined
      ? ` ${source.policies.join(', ')}`
      : '';
  return `${decision.result} ${decision.rule}${policies}${element}${from}`;
}

function stateText(source: SourceExplanation, width: TableWidth): string {
  const applied =
    source.applied === undefined
      ? ''
      : `applied ${hashText(source.applied.hash, width)} (${source.applied.from})`;
  const baseline =
    source.baseline === undefined ? '' : `baseline ${hashText(source.baseline, width)}`;
  const snapshot = source.snapshot === undefined ? '' : `runs snapshot ${source.snapshot}`;
  const parts = [applied, baseline, source.stateRule ?? '', snapshot].filter((part) => part !== '');
  return parts.length === 0 ? '-' : parts.join(', ');
}

/** "will not roll, because …" for no-roll and cannot-tell; the verdict itself otherwise. */
export function verdictText(source: Pick<SourceExplanation, 'verdict' | 'because'>): string {
  if (source.verdict === 'no-roll' || source.verdict === 'cannot-tell') {
    return `${VERDICTS[source.verdict]}, because ${REASONS[source.because]}`;
  }
  return VERDICTS[source.verdict];
}

function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  return rows.map((row) =>
    row
      .map((cell, column) =>
        column === row.length - 1 ? cell : cell.padEnd(widths?.[column] ?? 0),
      )
      .join('  '),
  );
}

export function configText(config: ConfigOrigin): string {
  switch (config.kind) {
    case 'deployment':
      return `options of the running kreload: Deployment ${config.namespace}/${config.name}`;
    case 'flags':
      return `options from the command line: ${config.args.join(' ') || '(defaults)'}`;
    case 'defaults':
      return `default options (${config.note})`;
    case 'controller':
      return `answer of the running kreload${config.pod === undefined ? '' : ` (pod ${config.pod})`}, from its caches and options`;
  }
}

function currentText(source: SourceExplanation, width: TableWidth): string {
  return source.status === 'absent' ? 'missing' : hashText(source.currentHash, width);
}

function sourceRows(sources: readonly SourceExplanation[], width: TableWidth): string[] {
  const header = ['SOURCE', 'REFERENCED', 'DECISION', 'CURRENT', 'STATE', 'VERDICT'];
  return table([
    header,
    ...sources.map((source) => [
      source.key,
      whereText(source),
      ruleText(source),
      currentText(source, width),
      stateText(source, width),
      verdictText(source),
    ]),
  ]);
}

function queueText(queue: QueueState): string {
  switch (queue.state) {
    case 'idle':
      return 'no pass due (the next comes with a change or the resync)';
    case 'queued':
      return `next pass due at ${queue.dueAt}`;
    case 'in-flight':
      return 'being reconciled now';
  }
}

function shardText(shard: ShardFacts): string {
  const writer = shard.owned ? 'this replica writes it' : 'this replica does not write it';
  return (
    `namespace bucket ${String(shard.bucket)} held by ${shard.holder ?? 'nobody'}, ` +
    `assigned to ${shard.assigned ?? 'no live member'}; ${writer}`
  );
}

function controllerLines(controller: ControllerFacts | undefined): string[] {
  if (controller === undefined) return [];
  const role = controller.shard
    ? shardText(controller.shard)
    : controller.leading
      ? 'leader'
      : 'not the leader (writes nothing)';
  return [
    `  controller: ${role}; ${queueText(controller.queue)}`,
    ...controller.marks.map(
      (mark) => `  pending ${mark.kind} mark for ${mark.source}, observed at ${mark.at}`,
    ),
  ];
}

function policyLines(policy: PolicyFacts | undefined): string[] {
  if (policy === undefined) return [];
  if (policy.state === 'unknown') return [`  ReloadPolicies: cannot tell (${policy.why})`];
  const settings = [
    policy.strategy && `strategy ${policy.strategy.value} from ${policy.strategy.policy}`,
    policy.syncDelayMs !== undefined && `syncDelay ${String(policy.syncDelayMs)}ms`,
    policy.pausePeriod !== undefined && `pausePeriod ${policy.pausePeriod}`,
    policy.configRevisions !== undefined && `configRevisions ${policy.configRevisions}`,
  ].filter((text) => typeof text === 'string');
  return [
    `  bound by ReloadPolicy ${policy.policies.join(', ')}${settings.length === 0 ? '' : `: ${settings.join(', ')}`}`,
    ...policy.conflicts.map(
      (conflict) => `  policy conflict (${conflict.policy}): ${conflict.message}`,
    ),
  ];
}

function rolloutLines(rollout: RolloutFacts | undefined): string[] {
  if (rollout === undefined) return [];
  const which =
    rollout.of === 'kreload'
      ? `rollout kreload started (generation ${String(rollout.generation)})`
      : `current rollout (generation ${String(rollout.generation ?? '?')})`;
  const state =
    rollout.reason === undefined ? rollout.state : `${rollout.state} (${rollout.reason})`;
  const when = [
    rollout.startedAt !== undefined &&
      (rollout.adopted === true
        ? `in progress when this controller started, followed since ${rollout.startedAt}`
        : `started ${rollout.startedAt}`),
    rollout.endedAt !== undefined && `ended ${rollout.endedAt}`,
    rollout.result === 'superseded' && 'superseded by a later roll',
  ].filter((text) => typeof text === 'string');
  return [
    `  ${which}: ${state}: ${rollout.detail}${when.length === 0 ? '' : `; ${when.join(', ')}`}`,
  ];
}

function haltLines(halts: readonly HaltFacts[] | undefined): string[] {
  return (halts ?? []).map((halt) => {
    const change = `the change of ${halt.source} (hash ${halt.hash.slice(0, 12)})`;
    const by = `${halt.by.kind} ${halt.by.namespace}/${halt.by.name}`;
    const what = halt.self
      ? `  halted ${change}: this workload's rollout failed (${halt.reason})`
      : `  held: ${change} is halted by ${by} (${halt.reason})`;
    return `${what} since ${halt.at}; resume: ${halt.resume}, or change the source again`;
  });
}

/** How `rolls by:` names each roll. */
const ROLL_ACTION_WORDS: Readonly<Record<RollActionType, string>> = {
  'template-patch': 'template-patch',
  'create-job-from-cronjob': 'create-job-from-cronjob',
  'recreate-job': 'recreate-job',
  'rollout-restart': 'rollout-restart',
  'evict-pods': 'pod eviction',
};

/** Each hold on the planned roll with when it ends, and the held changes recorded on W. */
function holdLines(facts: WorkloadExplanation['facts']): string[] {
  const lines = (facts.holds ?? []).map(
    (hold) =>
      `  held (${hold.reason}): ${hold.detail}${hold.until === undefined ? '' : `; ends at ${hold.until}`}`,
  );
  if (facts.pendingRoll !== undefined) {
    lines.push(`  pending roll (kreload.io/pending-roll): ${facts.pendingRoll.join(', ')}`);
  }
  return lines;
}

/** A roll by eviction under way: the marker, and the running controller's progress and hold. */
function evictingLines(evicting: WorkloadExplanation['facts']['evicting']): string[] {
  if (evicting === undefined) return [];
  const { before, progress, held } = evicting;
  const lines = [
    `  pod eviction in progress: pods created at or before ${before} still run an older config; they are evicted as the budget allows, each replacement Ready before the next`,
  ];
  if (progress !== undefined) {
    lines.push(`  progress: ${String(progress.replaced)}/${String(progress.total)} pods replaced`);
  }
  if (held !== undefined)
    lines.push(`  eviction held: ${held.reason}; next try at ${held.retryAt}`);
  return lines;
}

function workloadLines(workload: WorkloadExplanation, width: TableWidth): string[] {
  const { facts } = workload;
  const lines = [`${workload.kind} ${workload.namespace}/${workload.name}`];
  if (workload.gate !== undefined) lines.push(`  not rolled at all: ${REASONS[workload.gate]}`);
  lines.push(`  rolls by: ${ROLL_ACTION_WORDS[facts.rollAction]}, state in: ${facts.strategy}`);
  if (facts.baselineIn !== undefined) {
    lines.push(
      facts.baselineIn === 'workload'
        ? '  baseline in: the workload (kreload.io/baseline)'
        : `  baseline in: ConfigMap ${facts.baselineIn} (the baseline store)`,
    );
  }
  lines.push(...evictingLines(facts.evicting));
  if (facts.paused) {
    lines.push(
      `  paused${facts.resumesAt === undefined ? ' (not by kreload)' : `, kreload resumes it at ${facts.resumesAt}`}`,
    );
  }
  if (facts.suspended) lines.push('  suspended (spec.suspend)');
  if (facts.instantiatePending !== undefined) {
    lines.push(`  instantiate pending since ${facts.instantiatePending}`);
  }
  if (facts.recreationPending !== undefined) {
    lines.push(
      `  Job recreation pending since ${facts.recreationPending.since}: kreload deleted it to roll it and creates it again`,
    );
  }
  lines.push(...holdLines(facts));
  lines.push(...rolloutLines(facts.rollout));
  lines.push(...haltLines(facts.halts));
  lines.push(...controllerLines(facts.controller));
  lines.push(...policyLines(facts.policy));
  for (const collision of facts.collisions) {
    lines.push(`  env-var collision ${collision.envVar}: ${collision.keys.join(', ')}`);
  }
  lines.push('');
  if (workload.sources.length === 0) lines.push('  no source is referenced or listed');
  else lines.push(...sourceRows(workload.sources, width).map((line) => `  ${line}`));
  for (const problem of workload.problems) {
    lines.push(`  invalid annotation ${problem.key}: ${problem.problem}; ${problem.consequence}`);
  }
  return lines;
}

function usageRows(usages: readonly SourceUsage[], width: TableWidth): string[] {
  // Wide adds what the workload form shows per source: the current hash and the workload's state.
  const wide = width === 'wide';
  return table([
    ['WORKLOAD', 'REFERENCED', 'DECISION', ...(wide ? ['CURRENT', 'STATE'] : []), 'VERDICT'],
    ...usages.map((usage) => [
      `${usage.kind}/${usage.name}`,
      whereText(usage.source),
      ruleText(usage.source),
      ...(wide ? [currentText(usage.source, width), stateText(usage.source, width)] : []),
      verdictText(usage.source),
    ]),
  ]).map((line) => `  ${line}`);
}

function sourceQueryLines(
  report: NonNullable<ExplainReport['source']>,
  width: TableWidth,
): string[] {
  const lines = [`${report.key} in ${report.namespace}`, '', 'A change rolls:'];
  lines.push(...(report.rolls.length === 0 ? ['  (none)'] : usageRows(report.rolls, width)));
  lines.push('', 'Referenced or listed, but a change does not roll:');
  lines.push(
    ...(report.doesNotRoll.length === 0 ? ['  (none)'] : usageRows(report.doesNotRoll, width)),
  );
  if (report.unexplained !== undefined && report.unexplained > 0) {
    lines.push(
      '',
      `${String(report.unexplained)} more workloads may use it and were not explained here; explain each workload to see them`,
    );
  }
  return lines;
}

function renderTable(report: ExplainReport, width: TableWidth): string {
  const lines = [configText(report.config), ''];
  if (report.workload !== undefined) lines.push(...workloadLines(report.workload, width));
  if (report.source !== undefined) lines.push(...sourceQueryLines(report.source, width));
  if (report.assumptions.length > 0) {
    lines.push('', 'explain assumes:', ...report.assumptions.map((text) => `  - ${text}`));
  }
  return `${lines.join('\n')}\n`;
}

export function renderReport(
  report: ExplainReport,
  format: OutputFormat,
  dumpYaml: YamlDumper = (value) => JSON.stringify(value, null, 2),
): string {
  switch (format) {
    case 'table':
    case 'wide':
      return renderTable(report, format);
    case 'json':
      return `${JSON.stringify(report, null, 2)}\n`;
    case 'yaml':
      return dumpYaml(JSON.parse(JSON.stringify(report)) as unknown);
  }
}
