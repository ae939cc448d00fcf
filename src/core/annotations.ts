/**
 * The one table of annotation keys (§3.1, §3.2): every key kreload reads or writes is a row, and
 * `AnnotationKeys`, its defaults, the keys the workload and source projections keep, the opt-in keys
 * whose change moves `relevantSince` (§5.4) and the key table of docs/annotations.md derive from it.
 * Like source-types.ts, this module imports nothing, so core/types.ts can take its types from here.
 */

/** Where a key lives: W (workload metadata), PT (pod template) or S (the source, §3.1). */
export type AnnotationPlacement = 'W' | 'PT' | 'S';

interface AnnotationRowFields {
  /** The field of `AnnotationKeys`, or the name of a fixed key. */
  readonly name: string;
  /** The key, or its default when an option renames it. */
  readonly key: string;
  /** The `annotation-key` option of config/options.ts that renames the key; undefined: fixed. */
  readonly option: string | undefined;
  /**
   * Whether the key is one of the configured `AnnotationKeys` the rules read (the keys an option
   * renames, and the fixed ones Reloader also reads); false for the keys only kreload writes.
   */
  readonly configured: boolean;
  /** Who sets it: the user (an opt-in or setting kreload reads), or kreload (its own state). */
  readonly setBy: 'user' | 'kreload';
  /** Where it is read or written. */
  readonly on: readonly AnnotationPlacement[];
  /**
   * Where a change of the key is a change of the workload's opt-in (§5.4 `relevantSince`): the
   * keys §3.5 reads from W, and those its fallback reads from PT.
   */
  readonly tracked: readonly AnnotationPlacement[];
  /** Whether the workload projection keeps it on the view (W and PT); the rest never pass. */
  readonly kept: boolean;
  /** docs/annotations.md: where it goes, and what its value means. */
  readonly doc: { readonly placement: string; readonly value: string };
}

const OPT_IN_W_PT = {
  configured: true,
  setBy: 'user',
  on: ['W', 'PT'],
  tracked: ['W', 'PT'],
  kept: true,
} as const;

const EXCLUDE_LIST = {
  configured: true,
  setBy: 'user',
  on: ['W'],
  tracked: ['W'],
  kept: true,
} as const;

/** A source key; kept on workload views too, as every configured key is. */
const ON_SOURCE = { configured: true, setBy: 'user', on: ['S'], tracked: [], kept: true } as const;

/** kreload's own state on W or PT: kept so reconciliation reads it back, never an opt-in. */
const KRELOAD_STATE = { configured: false, setBy: 'kreload', tracked: [], kept: true } as const;

/** The rows, in the order of the key table of docs/annotations.md. */
const ROWS = [
  {
    ...OPT_IN_W_PT,
    name: 'auto',
    key: 'reloader.stakater.com/auto',
    option: 'autoAnnotation',
    doc: {
      placement: 'W, or PT by fallback',
      value: 'bool; covers ConfigMaps, Secrets and SecretProviderClasses',
    },
  },
  {
    ...OPT_IN_W_PT,
    name: 'configmapAuto',
    key: 'configmap.reloader.stakater.com/auto',
    option: 'configmapAutoAnnotation',
    doc: { placement: 'W / PT', value: 'bool; ConfigMaps only' },
  },
  {
    ...OPT_IN_W_PT,
    name: 'secretAuto',
    key: 'secret.reloader.stakater.com/auto',
    option: 'secretAutoAnnotation',
    doc: { placement: 'W / PT', value: 'bool; Secrets only' },
  },
  {
    ...OPT_IN_W_PT,
    name: 'secretProviderClassAuto',
    key: 'secretproviderclass.reloader.stakater.com/auto',
    option: 'secretproviderclassAutoAnnotation',
    doc: { placement: 'W / PT', value: 'bool; SecretProviderClasses only' },
  },
  {
    ...OPT_IN_W_PT,
    name: 'configmapReload',
    key: 'configmap.reloader.stakater.com/reload',
    option: 'configmapAnnotation',
    doc: { placement: 'W / PT', value: 'reload list of ConfigMap names' },
  },
  {
    ...OPT_IN_W_PT,
    name: 'secretReload',
    key: 'secret.reloader.stakater.com/reload',
    option: 'secretAnnotation',
    doc: { placement: 'W / PT', value: 'reload list of Secret names' },
  },
  {
    ...OPT_IN_W_PT,
    name: 'secretProviderClassReload',
    key: 'secretproviderclass.reloader.stakater.com/reload',
    option: 'secretproviderclassAnnotation',
    doc: { placement: 'W / PT', value: 'reload list of SecretProviderClass names' },
  },
  {
    ...OPT_IN_W_PT,
    name: 'search',
    key: 'reloader.stakater.com/search',
    option: 'autoSearchAnnotation',
    doc: { placement: 'W / PT', value: 'exactly `true`' },
  },
  {
    ...ON_SOURCE,
    name: 'match',
    key: 'reloader.stakater.com/match',
    option: 'searchMatchAnnotation',
    doc: { placement: 'S', value: 'exactly `true`' },
  },
  {
    ...ON_SOURCE,
    name: 'ignore',
    key: 'reloader.stakater.com/ignore',
    option: 'ignoreAnnotation',
    doc: { placement: 'S only (no effect on a workload)', value: 'exactly `true`' },
  },
  {
    ...EXCLUDE_LIST,
    name: 'configmapExclude',
    key: 'configmaps.exclude.reloader.stakater.com/reload',
    option: 'configmapExcludeAnnotation',
    doc: { placement: 'W only, never PT', value: 'exclude list' },
  },
  {
    ...EXCLUDE_LIST,
    name: 'secretExclude',
    key: 'secrets.exclude.reloader.stakater.com/reload',
    option: 'secretExcludeAnnotation',
    doc: { placement: 'W only', value: 'exclude list' },
  },
  {
    ...EXCLUDE_LIST,
    name: 'secretProviderClassExclude',
    key: 'secretproviderclasses.exclude.reloader.stakater.com/reload',
    option: 'secretproviderclassExcludeAnnotation',
    doc: { placement: 'W only', value: 'exclude list' },
  },
  {
    configured: true,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'rolloutStrategy',
    key: 'reloader.stakater.com/rollout-strategy',
    option: undefined,
    doc: {
      placement: 'W of an Argo Rollout',
      value: '`restart` selects the restart strategy; anything else selects `rollout`',
    },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'podRolloutStrategy',
    key: 'kreload.io/rollout-strategy',
    option: undefined,
    doc: {
      placement: 'W of a Deployment, StatefulSet, DaemonSet or Argo Rollout',
      value:
        '`evict` rolls by evicting the pods through the Eviction API, never touching the template',
    },
  },
  {
    configured: true,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'pausePeriod',
    key: 'deployment.reloader.stakater.com/pause-period',
    option: 'pauseDeploymentAnnotation',
    doc: { placement: 'W of a Deployment only', value: 'Go duration, e.g. `5m`' },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'configRevisions',
    key: 'kreload.io/config-revisions',
    option: undefined,
    doc: {
      placement: 'W of a Deployment, StatefulSet or DaemonSet',
      value:
        '`"true"` snapshots the tracked ConfigMaps at each roll (with `--enable-config-revisions`)',
    },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'configRevisionsSecrets',
    key: 'kreload.io/config-revisions-secrets',
    option: undefined,
    doc: {
      placement: 'W, with `kreload.io/config-revisions`',
      value: '`"true"` snapshots the tracked Secrets too',
    },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'rolloutPriority',
    key: 'kreload.io/rollout-priority',
    option: undefined,
    doc: {
      placement: 'W',
      value:
        'integer; with `--rollout-waves` lower values roll first within a change (default 0; anything else is warned about and read as 0)',
    },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'haltOnFailedRollout',
    key: 'kreload.io/halt-on-failed-rollout',
    option: undefined,
    doc: {
      placement: 'W',
      value:
        '`"true"` or `"false"`: whether this workload failing its wave halts the rest of the change (default `--halt-on-failed-rollout`)',
    },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'undoFailedRollout',
    key: 'kreload.io/undo-failed-rollout',
    option: undefined,
    doc: {
      placement: 'W opted in to config revisions',
      value:
        '`"true"` or `"false"`: whether this workload is rolled back when it halts its change (default `--undo-failed-rollouts`)',
    },
  },
  {
    ...KRELOAD_STATE,
    on: ['W'],
    name: 'rolloutHalted',
    key: 'kreload.io/rollout-halted',
    option: undefined,
    doc: {
      placement: 'W of a workload whose rollout failed its wave',
      value:
        'JSON `{"source","hash","at","reason"}` naming the halted change; remove it to resume the change',
    },
  },
  {
    ...KRELOAD_STATE,
    on: ['W'],
    name: 'rolloutFailed',
    key: 'kreload.io/rollout-failed',
    option: undefined,
    doc: {
      placement: 'W of a workload whose rollout failed its wave',
      value:
        "the halt marker's JSON, written with it and kept when it is removed: the failure of that change was accepted (resumed); removed by the workload's next roll",
    },
  },
  {
    ...KRELOAD_STATE,
    configured: true,
    on: ['W'],
    name: 'pausedAt',
    key: 'deployment.reloader.stakater.com/paused-at',
    option: 'pauseDeploymentTimeAnnotation',
    doc: {
      placement: 'W of a Deployment',
      value: 'RFC 3339 UTC time of the pause; removed on resume',
    },
  },
  {
    ...KRELOAD_STATE,
    on: ['PT'],
    name: 'lastReloadedFrom',
    key: 'reloader.stakater.com/last-reloaded-from',
    option: undefined,
    doc: { placement: 'PT', value: 'JSON naming the source of the last roll' },
  },
  {
    ...KRELOAD_STATE,
    on: ['W', 'PT'],
    name: 'sourceHashes',
    key: 'kreload.io/source-hashes',
    option: undefined,
    doc: { placement: 'PT, or W', value: 'map source key → hash at the last roll' },
  },
  {
    ...KRELOAD_STATE,
    on: ['W'],
    name: 'baseline',
    key: 'kreload.io/baseline',
    option: undefined,
    doc: { placement: 'W', value: 'map source key → hash of sources seen but never rolled for' },
  },
  {
    ...KRELOAD_STATE,
    on: ['W'],
    name: 'cronjobInstantiate',
    key: 'cronjob.kubernetes.io/instantiate',
    option: undefined,
    doc: { placement: 'Jobs created from a CronJob', value: '`manual`' },
  },
  {
    ...KRELOAD_STATE,
    on: ['W'],
    name: 'instantiatePending',
    key: 'kreload.io/instantiate-pending',
    option: undefined,
    doc: {
      placement: 'W of a DeploymentConfig without a ConfigChange trigger',
      value: 'RFC 3339 time of the template patch whose instantiate is owed',
    },
  },
  {
    ...KRELOAD_STATE,
    on: ['W'],
    name: 'evictBefore',
    key: 'kreload.io/evict-before',
    option: undefined,
    doc: {
      placement: 'W of a workload rolled by eviction, while pods are evicted',
      value: 'RFC 3339 time: pods created at or before it still run an older config',
    },
  },
  {
    ...KRELOAD_STATE,
    on: ['PT'],
    name: 'snapshots',
    key: 'kreload.io/snapshots',
    option: undefined,
    doc: {
      placement: 'PT of a workload with config revisions',
      value: 'map source key → snapshot name',
    },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'restartWindow',
    key: 'reloader.stakater.com/restart-window',
    option: undefined,
    doc: {
      placement: 'W (with `--enable-restart-windows`)',
      value:
        'JSON `{"timezone","windows":[{"cron","duration"}],"deny":[…]}`: rolls start only inside a window and outside every deny window',
    },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'flapMaxChanges',
    key: 'kreload.io/flap-max-changes',
    option: undefined,
    doc: {
      placement: 'W',
      value:
        'integer 0–10000: this workload is held when a source it rolls for changes more often than this within its flap period (default `--flap-max-changes`; 0 turns its breaker off)',
    },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'flapPeriod',
    key: 'kreload.io/flap-period',
    option: undefined,
    doc: {
      placement: 'W',
      value:
        'Go duration 1s–24h: the period its flap changes are counted in (default `--flap-period`)',
    },
  },
  {
    configured: false,
    setBy: 'user',
    on: ['W'],
    tracked: [],
    kept: true,
    name: 'flapCoolDown',
    key: 'kreload.io/flap-cool-down',
    option: undefined,
    doc: {
      placement: 'W',
      value:
        'Go duration 1s–24h: how long a flapping source must be quiet before this workload rolls (default `--flap-cool-down`)',
    },
  },
  {
    ...KRELOAD_STATE,
    on: ['W'],
    name: 'pendingRoll',
    key: 'kreload.io/pending-roll',
    option: undefined,
    doc: {
      placement: 'W of a workload whose roll is held',
      value:
        'map source key → hash of the held changes; the roll that ends the hold covers them all and removes it',
    },
  },
] as const satisfies readonly AnnotationRowFields[];

type Row = (typeof ROWS)[number];

/** The name of a configured key: a field of `AnnotationKeys`. */
export type AnnotationName = Extract<Row, { readonly configured: true }>['name'];

/** The annotation keys the rules read, with the override flags applied (§3.1, §3.2). */
export type AnnotationKeys = Readonly<Record<AnnotationName, string>>;

/** An option that renames a key (an `annotation-key` option of config/options.ts). */
export type AnnotationOption = NonNullable<Row['option']>;

export interface AnnotationRow extends AnnotationRowFields {
  readonly option: AnnotationOption | undefined;
}

export const ANNOTATION_ROWS: readonly AnnotationRow[] = ROWS;

function isConfigured(row: Row): row is Extract<Row, { readonly configured: true }> {
  return row.configured;
}

/** `AnnotationKeys` whose every key is `keyOf` its row: the defaults, or the configured keys. */
export function annotationKeysFrom(
  keyOf: (row: { readonly key: string; readonly option: AnnotationOption | undefined }) => string,
): AnnotationKeys {
  const keys: Partial<Record<AnnotationName, string>> = {};
  for (const row of ROWS.filter(isConfigured)) keys[row.name] = keyOf(row);
  // Every configured row filled its field above.
  return keys as AnnotationKeys;
}

export const DEFAULT_ANNOTATION_KEYS: AnnotationKeys = annotationKeysFrom((row) => row.key);

/** The key of a row: the configured one, or the fixed key of a row no option renames. */
function keyIn(row: Row, keys: AnnotationKeys): string {
  return isConfigured(row) ? keys[row.name] : row.key;
}

function fixedKey(name: Exclude<Row, { readonly configured: true }>['name']): string {
  const row = ROWS.find((candidate) => candidate.name === name);
  if (row === undefined) throw new TypeError(`no annotation row ${name}`);
  return row.key;
}

/** Keys kreload writes (§3.2) and the config-revisions opt-ins (docs/adr/0036). */
export const LAST_RELOADED_FROM = fixedKey('lastReloadedFrom');
export const SOURCE_HASHES = fixedKey('sourceHashes');
export const BASELINE = fixedKey('baseline');
export const CRONJOB_INSTANTIATE = fixedKey('cronjobInstantiate');
export const INSTANTIATE_PENDING = fixedKey('instantiatePending');
export const CONFIG_REVISIONS = fixedKey('configRevisions');
export const CONFIG_REVISIONS_SECRETS = fixedKey('configRevisionsSecrets');
export const SNAPSHOTS = fixedKey('snapshots');
export const RESTART_WINDOW = fixedKey('restartWindow');
export const PENDING_ROLL = fixedKey('pendingRoll');
export const ROLLOUT_PRIORITY = fixedKey('rolloutPriority');
export const ROLLOUT_HALTED = fixedKey('rolloutHalted');
export const ROLLOUT_FAILED = fixedKey('rolloutFailed');
export const HALT_ON_FAILED_ROLLOUT = fixedKey('haltOnFailedRollout');
export const UNDO_FAILED_ROLLOUT = fixedKey('undoFailedRollout');
export const FLAP_MAX_CHANGES = fixedKey('flapMaxChanges');
export const FLAP_PERIOD = fixedKey('flapPeriod');
export const FLAP_COOL_DOWN = fixedKey('flapCoolDown');
export const POD_ROLLOUT_STRATEGY = fixedKey('podRolloutStrategy');
export const EVICT_BEFORE = fixedKey('evictBefore');

const placedOn = (placements: readonly AnnotationPlacement[], placement: AnnotationPlacement) =>
  placements.includes(placement);

const isKept = (row: AnnotationRowFields): boolean => row.kept;
const KEPT_ROWS = ROWS.filter(isKept);
const TRACKED_ROWS = {
  W: ROWS.filter((row) => placedOn(row.tracked, 'W')),
  PT: ROWS.filter((row) => placedOn(row.tracked, 'PT')),
};

/** W and PT keys the workload projection keeps: those the rules read and those kreload writes. */
export function keptWorkloadKeys(keys: AnnotationKeys): readonly string[] {
  return [...new Set(KEPT_ROWS.map((row) => keyIn(row, keys)))];
}

type SourceRow = Extract<Row, { readonly on: readonly ['S'] }>;

/** The configured keys read from a source. */
export type SourceAnnotationName = SourceRow['name'];

function isSourceRow(row: Row): row is SourceRow {
  return placedOn(row.on, 'S');
}

const SOURCE_ROWS = ROWS.filter(isSourceRow);

/** S keys the source projections keep. */
export function keptSourceKeys(
  keys: Pick<AnnotationKeys, SourceAnnotationName>,
): readonly string[] {
  return SOURCE_ROWS.map((row) => keys[row.name]);
}

/** The opt-in keys read from `placement` whose change moves `relevantSince` (§5.4). */
export function trackedKeys(keys: AnnotationKeys, placement: 'W' | 'PT'): readonly string[] {
  return TRACKED_ROWS[placement].map((row) => keyIn(row, keys));
}
