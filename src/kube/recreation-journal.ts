/**
 * The Job recreation journal (docs/adr/0019-job-recreation-journal.md): one ConfigMap,
 * `kreload-job-recreations`, in kreload's own namespace, with one data key per Job that a roll is
 * deleting (`<namespace>.<name>`; a namespace holds no dot, so the key is unique). Entries are
 * added and removed with JSON merge patches of that one key, so concurrent workers never conflict
 * and no resourceVersion is needed; the ConfigMap is created by the first entry.
 *
 * The journal is input kreload acts on with its own rights (it creates the Job), so an entry is
 * replayed only when it is signed with kreload's key (src/kube/journal-key.ts), names a Job in a
 * namespace kreload acts on under its own data key, and its manifest is that Job. Anything else is
 * reported and left in place.
 */
import type { KeyObject } from 'node:crypto';
import type { WorkloadRef } from '../core/types.ts';
import type { JournalEntry, JournalRefusalReason, RecreationJournal } from '../reconcile/ports.ts';
import { ApiError } from '../core/api-error.ts';
import { toApiError } from './api-error.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { isJsonObject } from '../core/json.ts';
import { OTHER_RESOURCES, resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';
import { recreatedKindRow } from '../rollout/kinds.ts';
import { type Refusal, ReportedRefusals } from './reported-refusals.ts';
import { configMapCreation, configMapDataPatch } from './config-map-requests.ts';
import {
  JOURNAL_KEY_SECRET,
  type JournalKey,
  signPayload,
  verifiesPayload,
} from './journal-key.ts';

export const JOURNAL_NAME = 'kreload-job-recreations';
/** The API server's limit on a ConfigMap's data: a bigger entry can never be journalled. */
export const CONFIG_MAP_DATA_MAX_BYTES = 1024 * 1024;
const ENTRY_VERSION = 2;

export interface KubeRecreationJournalDeps {
  readonly transport: KubeTransport;
  /** kreload's own namespace (`POD_NAMESPACE`). */
  readonly namespace: string;
  /** Signs entries and checks their signatures. */
  readonly key: Pick<JournalKey, 'get'>;
  /**
   * Why kreload does not act on Jobs in `namespace` (not watched, ignored, not selected), or
   * undefined when it does.
   */
  readonly refuseNamespace: (namespace: string) => string | undefined;
  /**
   * A data key that does not hold an entry kreload may replay: reported once while it stays in the
   * journal (not at every replay), and left in place.
   */
  readonly onInvalidEntry: (key: string, refusal: EntryRefusal) => void;
}

/** An entry kreload does not replay: the reason, and a message for the log. */
export interface EntryRefusal {
  readonly refused: JournalRefusalReason;
  readonly message: string;
}

function refusal(refused: JournalRefusalReason, message: string): EntryRefusal {
  return { refused, message };
}

function isRefusal(value: object): value is EntryRefusal {
  return 'refused' in value;
}

/** The ConfigMap data key of a Job. */
export function journalKey(ref: WorkloadRef): string {
  return `${ref.namespace}.${ref.name}`;
}

/** What the signature covers: every field of the entry, in a fixed order. */
function signedPayload(entry: JournalEntry): string {
  return JSON.stringify({
    version: ENTRY_VERSION,
    namespace: entry.ref.namespace,
    name: entry.ref.name,
    deletedUid: entry.deletedUid,
    since: entry.since,
    manifest: entry.manifest,
  });
}

/** The stored form of one entry, signed with `key`. */
export function encodeEntry(entry: JournalEntry, key: KeyObject): string {
  const payload = signedPayload(entry);
  return `${payload.slice(0, -1)},"signature":${JSON.stringify(signPayload(key, payload))}}`;
}

export interface EntryChecks {
  readonly key: KeyObject;
  readonly refuseNamespace: (namespace: string) => string | undefined;
}

/** An entry as stored, before its namespace and signature are checked. */
export interface StoredEntry {
  readonly entry: JournalEntry;
  readonly signature: string | undefined;
}

/**
 * The entry stored under data key `dataKey`, unverified, or the reason it is not one: not an entry
 * of this version, a key other than its Job's, or a manifest that is not that Job.
 */
export function parseEntry(dataKey: string, text: string): StoredEntry | EntryRefusal {
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    return refusal('malformed', 'not JSON');
  }
  if (!isJsonObject(value)) return refusal('malformed', 'not a JSON object');
  if (value.version !== ENTRY_VERSION) {
    return refusal('malformed', `not a signed entry of version ${String(ENTRY_VERSION)}`);
  }
  const { namespace, name, deletedUid, since, manifest, signature } = value;
  if (typeof namespace !== 'string' || typeof name !== 'string' || typeof deletedUid !== 'string') {
    return refusal('malformed', 'namespace, name or deletedUid missing');
  }
  if (typeof since !== 'number' || !isJsonObject(manifest)) {
    return refusal('malformed', 'since or manifest missing');
  }
  const { kind } = recreatedKindRow();
  const ref = { kind, namespace, name };
  if (dataKey !== journalKey(ref)) {
    return refusal('wrong_key', `the key does not name ${kind} ${namespace}/${name}`);
  }
  const notTheJob = manifestMismatch(manifest, namespace, name);
  if (notTheJob !== undefined) return refusal('wrong_manifest', notTheJob);
  return {
    entry: { ref, deletedUid, since, manifest },
    signature: typeof signature === 'string' ? signature : undefined,
  };
}

/**
 * The entry stored under `dataKey` if kreload may replay it, or the reason it may not: what
 * parseEntry refuses, a namespace kreload does not act on, or a signature that is not kreload's.
 */
export function decodeEntry(
  dataKey: string,
  text: string,
  checks: EntryChecks,
): JournalEntry | EntryRefusal {
  const stored = parseEntry(dataKey, text);
  if (isRefusal(stored)) return stored;
  const { entry, signature } = stored;
  const refused = checks.refuseNamespace(entry.ref.namespace);
  if (refused !== undefined) return refusal('namespace_refused', refused);
  if (signature === undefined || !verifiesPayload(checks.key, signedPayload(entry), signature)) {
    return refusal(
      'bad_signature',
      `not signed with kreload's key (the Secret ${JOURNAL_KEY_SECRET})`,
    );
  }
  return entry;
}

/** Why `manifest` is not a batch/v1 Job named `name` in `namespace`, if it is not. */
function manifestMismatch(
  manifest: JsonObject,
  namespace: string,
  name: string,
): string | undefined {
  const { apiVersion, kind } = recreatedKindRow();
  if (manifest.apiVersion !== apiVersion || manifest.kind !== kind) {
    return `the manifest is not a ${apiVersion} ${kind}`;
  }
  const metadata = manifest.metadata;
  if (!isJsonObject(metadata) || metadata.name !== name) {
    return `the manifest is not named ${name}`;
  }
  if (metadata.namespace !== undefined && metadata.namespace !== namespace) {
    return `the manifest is not in namespace ${namespace}`;
  }
  return undefined;
}

function tooLarge(entry: JournalEntry, bytes: number): ApiError {
  return new ApiError(
    `Job ${entry.ref.namespace}/${entry.ref.name} is ${bytes} bytes, more than a ConfigMap holds ` +
      `(${CONFIG_MAP_DATA_MAX_BYTES}): it cannot be journalled, so it is not deleted`,
    {
      retryable: false,
    },
  );
}

/** Names the Job and says that nothing was deleted; status and retryability stay the server's. */
function notJournalled(entry: JournalEntry, error: unknown): ApiError {
  const cause = error instanceof ApiError ? error : toApiError(error);
  return new ApiError(
    `cannot journal Job ${entry.ref.namespace}/${entry.ref.name} before deleting it (not deleted): ${cause.message}`,
    {
      status: cause.status,
      retryable: cause.retryable,
      retryAfterMs: cause.retryAfterMs,
      cause,
    },
  );
}

function journalPath(namespace: string): string {
  return resourcePath(OTHER_RESOURCES.configMaps, { namespace, name: JOURNAL_NAME });
}

/**
 * The journal's data keys and values as served (a missing ConfigMap has none). Rejects with
 * ApiError.
 */
export async function readJournalData(
  transport: KubeTransport,
  namespace: string,
): Promise<ReadonlyMap<string, JsonValue>> {
  let served: JsonValue;
  try {
    served = (await transport.request({
      method: HttpMethod.GET,
      path: journalPath(namespace),
    })) as JsonValue;
  } catch (error) {
    if (toApiError(error).status === 404) return new Map();
    throw toApiError(error);
  }
  const data = isJsonObject(served) ? served.data : undefined;
  return new Map(isJsonObject(data) ? Object.entries(data) : []);
}

export class KubeRecreationJournal implements RecreationJournal {
  readonly #deps: KubeRecreationJournalDeps;
  readonly #reported = new ReportedRefusals();

  constructor(deps: KubeRecreationJournalDeps) {
    this.#deps = deps;
  }

  async record(entry: JournalEntry): Promise<void> {
    let key: KeyObject;
    try {
      key = await this.#deps.key.get();
    } catch (error) {
      throw notJournalled(entry, error);
    }
    const value = encodeEntry(entry, key);
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > CONFIG_MAP_DATA_MAX_BYTES) throw tooLarge(entry, bytes);
    const data = { [journalKey(entry.ref)]: value };
    try {
      try {
        await this.#patch(data);
      } catch (error) {
        if (toApiError(error).status !== 404) throw toApiError(error);
        await this.#create(data);
      }
    } catch (error) {
      throw notJournalled(entry, error);
    }
  }

  async remove(ref: WorkloadRef): Promise<void> {
    try {
      await this.#patch({ [journalKey(ref)]: null });
    } catch (error) {
      if (toApiError(error).status !== 404) throw toApiError(error);
    }
  }

  async entries(): Promise<readonly JournalEntry[]> {
    const data = await readJournalData(this.#deps.transport, this.#deps.namespace);
    if (data.size === 0) {
      // Nothing is refused any more: an entry written again later is reported again.
      this.#reported.unreported([]);
      return [];
    }
    const checks = { key: await this.#deps.key.get(), refuseNamespace: this.#deps.refuseNamespace };
    const entries: JournalEntry[] = [];
    const refusals: (Refusal<JournalRefusalReason> & { readonly refusal: EntryRefusal })[] = [];
    for (const [key, stored] of data) {
      const entry =
        typeof stored === 'string'
          ? decodeEntry(key, stored, checks)
          : refusal('malformed', 'not a string');
      if (isRefusal(entry)) refusals.push({ key, stored, reason: entry.refused, refusal: entry });
      else entries.push(entry);
    }
    for (const refused of this.#reported.unreported(refusals)) {
      this.#deps.onInvalidEntry(refused.key, refused.refusal);
    }
    return entries;
  }

  async #patch(data: JsonObject): Promise<void> {
    await this.#deps.transport.request(
      configMapDataPatch(this.#deps.namespace, JOURNAL_NAME, data),
    );
  }

  /** The first entry creates the ConfigMap; a racing creator's wins and the entry is patched in. */
  async #create(data: JsonObject): Promise<void> {
    const { namespace, transport } = this.#deps;
    try {
      await transport.request(
        configMapCreation(
          { namespace, name: JOURNAL_NAME, labels: { 'app.kubernetes.io/managed-by': 'kreload' } },
          data,
        ),
      );
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.status !== 409) throw apiError;
      await this.#patch(data).catch((again: unknown) => {
        throw toApiError(again);
      });
    }
  }
}
