/**
 * The Job recreation journal (docs/adr/0019-job-recreation-journal.md): one ConfigMap,
 * `kreload-job-recreations`, in kreload's own namespace, with one data key per Job that a roll is
 * deleting (`<namespace>.<name>`; a namespace holds no dot, so the key is unique). Entries are
 * added and removed with JSON merge patches of that one key, so concurrent workers never conflict
 * and no resourceVersion is needed; the ConfigMap is created by the first entry.
 */
import type { WorkloadRef } from '../core/types.ts';
import type { JournalEntry, RecreationJournal } from '../reconcile/ports.ts';
import { ApiError } from '../core/api-error.ts';
import { toApiError } from './api-error.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { isJsonObject } from '../core/json.ts';
import { OTHER_RESOURCES, resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';
import { FIELD_MANAGER } from './workload-client.ts';

export const JOURNAL_NAME = 'kreload-job-recreations';
/** The API server's limit on a ConfigMap's data: a bigger entry can never be journalled. */
export const CONFIG_MAP_DATA_MAX_BYTES = 1024 * 1024;
const ENTRY_VERSION = 1;
const MERGE_PATCH = 'application/merge-patch+json';

export interface KubeRecreationJournalDeps {
  readonly transport: KubeTransport;
  /** kreload's own namespace (`POD_NAMESPACE`). */
  readonly namespace: string;
  /** A data key that does not hold an entry: reported and left in place. */
  readonly onInvalidEntry: (key: string, reason: string) => void;
}

/** The ConfigMap data key of a Job. */
export function journalKey(ref: WorkloadRef): string {
  return `${ref.namespace}.${ref.name}`;
}

/** The stored form of one entry. */
export function encodeEntry(entry: JournalEntry): string {
  return JSON.stringify({
    version: ENTRY_VERSION,
    namespace: entry.ref.namespace,
    name: entry.ref.name,
    deletedUid: entry.deletedUid,
    since: entry.since,
    manifest: entry.manifest,
  });
}

/** An entry from its stored form, or the reason it is not one. */
export function decodeEntry(text: string): JournalEntry | string {
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    return 'not JSON';
  }
  if (!isJsonObject(value) || value.version !== ENTRY_VERSION) return 'unknown entry version';
  const { namespace, name, deletedUid, since, manifest } = value;
  if (typeof namespace !== 'string' || typeof name !== 'string' || typeof deletedUid !== 'string') {
    return 'namespace, name or deletedUid missing';
  }
  if (typeof since !== 'number' || !isJsonObject(manifest)) return 'since or manifest missing';
  return { ref: { kind: 'Job', namespace, name }, deletedUid, since, manifest };
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

export class KubeRecreationJournal implements RecreationJournal {
  readonly #deps: KubeRecreationJournalDeps;

  constructor(deps: KubeRecreationJournalDeps) {
    this.#deps = deps;
  }

  async record(entry: JournalEntry): Promise<void> {
    const value = encodeEntry(entry);
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
    let served: JsonValue;
    try {
      served = (await this.#deps.transport.request({
        method: HttpMethod.GET,
        path: this.#path(),
      })) as JsonValue;
    } catch (error) {
      if (toApiError(error).status === 404) return [];
      throw toApiError(error);
    }
    const data = isJsonObject(served) ? served.data : undefined;
    if (!isJsonObject(data)) return [];
    const entries: JournalEntry[] = [];
    for (const [key, text] of Object.entries(data)) {
      const entry = typeof text === 'string' ? decodeEntry(text) : 'not a string';
      if (typeof entry === 'string') this.#deps.onInvalidEntry(key, entry);
      else entries.push(entry);
    }
    return entries;
  }

  #path(): string {
    const { namespace } = this.#deps;
    return resourcePath(OTHER_RESOURCES.configMaps, { namespace, name: JOURNAL_NAME });
  }

  async #patch(data: JsonObject): Promise<void> {
    await this.#deps.transport.request({
      method: HttpMethod.PATCH,
      path: this.#path(),
      query: { fieldManager: FIELD_MANAGER },
      body: { data },
      contentType: MERGE_PATCH,
    });
  }

  /** The first entry creates the ConfigMap; a racing creator's wins and the entry is patched in. */
  async #create(data: JsonObject): Promise<void> {
    const { namespace, transport } = this.#deps;
    try {
      await transport.request({
        method: HttpMethod.POST,
        path: resourcePath(OTHER_RESOURCES.configMaps, { namespace }),
        query: { fieldManager: FIELD_MANAGER },
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: JOURNAL_NAME,
            namespace,
            labels: { 'app.kubernetes.io/managed-by': 'kreload' },
          },
          data,
        },
        contentType: 'application/json',
      });
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.status !== 409) throw apiError;
      await this.#patch(data).catch((again: unknown) => {
        throw toApiError(again);
      });
    }
  }
}
