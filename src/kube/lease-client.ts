/**
 * `coordination.k8s.io/v1` Lease access for leader election (§13.4), implementing leader/ports.ts
 * `LeaseStore`: get, create, and replace (PUT) carrying the resourceVersion just read, so a
 * concurrent writer gets 409 instead of a silent overwrite.
 *
 * `acquireTime` and `renewTime` are MicroTime: the API server rejects a timestamp without six
 * fractional digits (400). client-node's `V1MicroTime` exists for its typed API; on the wire
 * format used here they are written by `formatMicroTime`, and read back (strings) with `Date.parse`.
 */
import type { LeaseId, LeaseRecord, ObservedLease } from '../leader/ports.ts';
import type { NamedLease, ShardLeaseStore } from '../shard/ports.ts';
// The port's error class is part of its contract: the adapter must throw exactly this type.
import { LeaseConflictError } from '../leader/ports.ts';
import { toApiError } from './api-error.ts';
import { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import { numberAt, objectsAt, stringAt } from '../core/json.ts';
import { apiVersionOf, OTHER_RESOURCES, resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';
import { FIELD_MANAGER } from './workload-client.ts';

/** `2026-01-02T03:04:05.123000Z`: RFC 3339 with microseconds, as `metav1.MicroTime` requires. */
export function formatMicroTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function parseTime(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

export function leaseBody(id: LeaseId, record: LeaseRecord, resourceVersion?: string): JsonObject {
  const spec: JsonObject = {};
  if (record.holderIdentity !== undefined) spec.holderIdentity = record.holderIdentity;
  if (record.leaseDurationSeconds !== undefined) {
    spec.leaseDurationSeconds = record.leaseDurationSeconds;
  }
  if (record.acquireTime !== undefined) spec.acquireTime = formatMicroTime(record.acquireTime);
  if (record.renewTime !== undefined) spec.renewTime = formatMicroTime(record.renewTime);
  if (record.leaseTransitions !== undefined) spec.leaseTransitions = record.leaseTransitions;
  const metadata: JsonObject = { name: id.name, namespace: id.namespace };
  if (resourceVersion !== undefined) metadata.resourceVersion = resourceVersion;
  return { apiVersion: apiVersionOf(OTHER_RESOURCES.leases), kind: 'Lease', metadata, spec };
}

export function parseLease(obj: unknown): ObservedLease {
  const resourceVersion = stringAt(obj, ['metadata', 'resourceVersion']);
  if (resourceVersion === undefined) {
    throw new ApiError('Lease answer has no resourceVersion', { retryable: false });
  }
  const holder = stringAt(obj, ['spec', 'holderIdentity']);
  return {
    resourceVersion,
    record: {
      holderIdentity: holder === '' ? undefined : holder,
      leaseDurationSeconds: numberAt(obj, ['spec', 'leaseDurationSeconds']),
      acquireTime: parseTime(stringAt(obj, ['spec', 'acquireTime'])),
      renewTime: parseTime(stringAt(obj, ['spec', 'renewTime'])),
      leaseTransitions: numberAt(obj, ['spec', 'leaseTransitions']),
    },
  };
}

export interface LeaseClientDeps {
  readonly transport: KubeTransport;
}

/** Rejects with `LeaseConflictError` on 409, with `ApiError` otherwise. */
export class LeaseClient implements ShardLeaseStore {
  readonly #transport: KubeTransport;

  constructor(deps: LeaseClientDeps) {
    this.#transport = deps.transport;
  }

  async get(id: LeaseId): Promise<ObservedLease | undefined> {
    try {
      return parseLease(
        await this.#transport.request({
          method: HttpMethod.GET,
          path: resourcePath(OTHER_RESOURCES.leases, id),
        }),
      );
    } catch (err) {
      const error = toApiError(err);
      if (error.status === 404) return undefined;
      throw error;
    }
  }

  /** One LIST of the namespace's Leases, those named `prefix…` kept (active-active mode). */
  async list(namespace: string, prefix: string): Promise<readonly NamedLease[]> {
    const answer = await this.#transport.request({
      method: HttpMethod.GET,
      path: resourcePath(OTHER_RESOURCES.leases, { namespace }),
    });
    return objectsAt(answer, ['items']).flatMap((item) => {
      const name = stringAt(item, ['metadata', 'name']);
      return name?.startsWith(prefix) === true ? [{ name, lease: parseLease(item) }] : [];
    });
  }

  create(id: LeaseId, record: LeaseRecord): Promise<ObservedLease> {
    return this.#write(
      HttpMethod.POST,
      resourcePath(OTHER_RESOURCES.leases, { namespace: id.namespace }),
      leaseBody(id, record),
    );
  }

  replace(id: LeaseId, record: LeaseRecord, resourceVersion: string): Promise<ObservedLease> {
    return this.#write(
      HttpMethod.PUT,
      resourcePath(OTHER_RESOURCES.leases, id),
      leaseBody(id, record, resourceVersion),
    );
  }

  async #write(method: HttpMethod, path: string, body: JsonObject): Promise<ObservedLease> {
    try {
      return parseLease(
        await this.#transport.request({
          method,
          path,
          query: { fieldManager: FIELD_MANAGER },
          body,
          contentType: 'application/json',
        }),
      );
    } catch (err) {
      const error = toApiError(err);
      if (error.status === 409)
        throw new LeaseConflictError(error.message, { reason: error.reason, cause: error });
      throw error;
    }
  }
}
