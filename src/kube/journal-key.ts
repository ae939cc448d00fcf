/**
 * The key that signs Job recreation journal entries (docs/adr/0019): a Secret,
 * `kreload-job-recreations-key`, in the journal's namespace, created by kreload the first time it
 * needs it. Only what holds this key can write an entry that kreload replays, so write access to
 * the journal ConfigMap alone cannot make kreload create a Job.
 */
import {
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { ApiError } from '../core/api-error.ts';
import type { JsonValue } from '../core/json.ts';
import { isJsonObject } from '../core/json.ts';
import { toApiError } from './api-error.ts';
import { OTHER_RESOURCES, resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';
import { FIELD_MANAGER } from './workload-client.ts';

export const JOURNAL_KEY_SECRET = 'kreload-job-recreations-key';
const DATA_KEY = 'hmac-sha256';
const KEY_BYTES = 32;

/** The signature of `payload` under `key`, as stored in an entry. */
export function signPayload(key: KeyObject, payload: string): string {
  return createHmac('sha256', key).update(payload, 'utf8').digest('base64');
}

/** Whether `signature` is `payload`'s under `key`, compared in constant time. */
export function verifiesPayload(key: KeyObject, payload: string, signature: string): boolean {
  const expected = Buffer.from(signPayload(key, payload), 'base64');
  const given = Buffer.from(signature, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface JournalKeyDeps {
  readonly transport: KubeTransport;
  readonly namespace: string;
  /** Default: the system's CSPRNG. */
  readonly randomKey?: (() => Buffer) | undefined;
}

function malformed(namespace: string): ApiError {
  return new ApiError(
    `Secret ${namespace}/${JOURNAL_KEY_SECRET} holds no ${String(KEY_BYTES)}-byte key ` +
      `under "${DATA_KEY}": delete it and kreload creates a new one (pending entries are then refused)`,
    { retryable: false },
  );
}

/**
 * Reads the key once (GET, then POST on 404; a racing creator's 409 means GET again) and keeps it
 * as a KeyObject; a failed load is tried again at the next call. Rejects with ApiError.
 */
export class JournalKey {
  readonly #deps: JournalKeyDeps;
  #loading: Promise<KeyObject> | undefined;

  constructor(deps: JournalKeyDeps) {
    this.#deps = deps;
  }

  get(): Promise<KeyObject> {
    this.#loading ??= this.#load().catch((error: unknown) => {
      this.#loading = undefined;
      throw toApiError(error);
    });
    return this.#loading;
  }

  async #load(): Promise<KeyObject> {
    const served = await this.#read();
    if (served !== undefined) return served;
    try {
      return await this.#create();
    } catch (error) {
      if (toApiError(error).status !== 409) throw toApiError(error);
      const raced = await this.#read();
      if (raced === undefined) throw toApiError(error);
      return raced;
    }
  }

  async #read(): Promise<KeyObject | undefined> {
    const { namespace, transport } = this.#deps;
    let served: JsonValue;
    try {
      served = (await transport.request({
        method: HttpMethod.GET,
        path: resourcePath(OTHER_RESOURCES.secrets, { namespace, name: JOURNAL_KEY_SECRET }),
      })) as JsonValue;
    } catch (error) {
      if (toApiError(error).status === 404) return undefined;
      throw toApiError(error);
    }
    const data = isJsonObject(served) ? served.data : undefined;
    const encoded = isJsonObject(data) ? data[DATA_KEY] : undefined;
    if (typeof encoded !== 'string') throw malformed(namespace);
    const bytes = Buffer.from(encoded, 'base64');
    if (bytes.length < KEY_BYTES) throw malformed(namespace);
    return createSecretKey(bytes);
  }

  async #create(): Promise<KeyObject> {
    const { namespace, transport } = this.#deps;
    const bytes = (this.#deps.randomKey ?? (() => randomBytes(KEY_BYTES)))();
    await transport.request({
      method: HttpMethod.POST,
      path: resourcePath(OTHER_RESOURCES.secrets, { namespace }),
      query: { fieldManager: FIELD_MANAGER },
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: JOURNAL_KEY_SECRET,
          namespace,
          labels: { 'app.kubernetes.io/managed-by': 'kreload' },
        },
        type: 'Opaque',
        immutable: true,
        data: { [DATA_KEY]: bytes.toString('base64') },
      },
      contentType: 'application/json',
    });
    return createSecretKey(bytes);
  }
}
