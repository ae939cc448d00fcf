/** Renderers of a HistoryReport: readable blocks per revision (default), JSON and YAML. */
import type { OutputFormat, TableWidth, YamlDumper } from '../explain/render.ts';
import type { Comparison, HistoryReport, HistoryRevision, PinnedSnapshot } from './model.ts';

const CONFIG_REVISIONS_TEXT: Readonly<Record<HistoryReport['configRevisions'], string>> = {
  off: 'off for this workload',
  configmaps: 'on (ConfigMaps)',
  'configmaps-and-secrets': 'on (ConfigMaps and Secrets)',
};

const STATE_TEXT: Readonly<Record<PinnedSnapshot['state'], string>> = {
  present: '',
  gone: ' (gone: garbage-collected)',
  forbidden: ' (may not be read)',
};

/** Go-like quoting, so an empty, multi-line or padded value is unambiguous on one line. */
function quoted(value: string): string {
  return JSON.stringify(value);
}

function comparisonLines(comparison: Comparison): string[] {
  switch (comparison.state) {
    case 'first':
      return ['oldest revision listed: nothing to compare with'];
    case 'same-snapshot':
      return ['no key changed (same snapshot as the previous revision)'];
    case 'previously-live':
      return ['the previous revision referenced the live source: nothing to compare with'];
    case 'cannot-compare':
      return [`keys changed: cannot tell, ${comparison.why}`];
    case 'compared': {
      const parts = [
        ['changed', comparison.changed],
        ['added', comparison.added],
        ['removed', comparison.removed],
      ] as const;
      const said = parts
        .filter(([, keys]) => keys.length > 0)
        .map(([word, keys]) => `${word} ${keys.join(', ')}`);
      const summary = said.length === 0 ? 'no key changed' : `keys ${said.join('; ')}`;
      const values = (comparison.values ?? []).map(
        (change) =>
          `  ${change.key}: ${change.before === undefined ? '(absent)' : quoted(change.before)}` +
          ` -> ${change.after === undefined ? '(absent)' : quoted(change.after)}`,
      );
      return [summary, ...values];
    }
  }
}

/** Wide prints whole hashes. */
function hashText(hash: string, width: TableWidth): string {
  return width === 'wide' ? hash : hash.slice(0, 12);
}

function revisionLines(
  report: HistoryReport,
  revision: HistoryRevision,
  width: TableWidth,
): string[] {
  const live = revision.live ? '  LIVE' : '';
  const head =
    `REVISION ${String(revision.revision)}  ${revision.createdAt ?? '-'}  ` +
    `${report.revisionKind} ${revision.object}${live}`;
  const lines = [head];
  if (revision.snapshots.length === 0) {
    lines.push('  no snapshots: the template references the live sources');
  }
  for (const pinned of revision.snapshots) {
    lines.push(
      `  ${pinned.source} -> ${pinned.snapshot}  hash ${hashText(pinned.hash, width)}` +
        STATE_TEXT[pinned.state],
    );
    for (const line of comparisonLines(pinned.comparison)) lines.push(`    ${line}`);
  }
  for (const source of revision.unpinned) lines.push(`  ${source} -> live again (no snapshot)`);
  return lines;
}

function renderTable(report: HistoryReport, width: TableWidth): string {
  const { workload } = report;
  const header = [
    `${workload.kind.toLowerCase()}/${workload.name} in ${workload.namespace}: ` +
      `${String(report.revisions.length)} revision(s); config revisions ` +
      CONFIG_REVISIONS_TEXT[report.configRevisions],
  ];
  if (report.revisions.length === 0) header.push('no revisions yet');
  const blocks = report.revisions.map((revision) =>
    revisionLines(report, revision, width).join('\n'),
  );
  const tail = report.incomplete
    ? ['', 'incomplete: some snapshots may not be read with these credentials']
    : [];
  return `${[header.join('\n'), ...blocks].join('\n\n')}\n${tail.join('\n')}${tail.length > 0 ? '\n' : ''}`;
}

export function renderHistory(
  report: HistoryReport,
  format: OutputFormat,
  dumpYaml: YamlDumper,
): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(report, undefined, 2)}\n`;
    case 'yaml':
      return dumpYaml(report);
    case 'table':
    case 'wide':
      return renderTable(report, format);
  }
}
