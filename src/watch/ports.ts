/**
 * What watch/ needs from the outside. kube/ implements these (with `import type` only); tests use the
 * in-memory versions. Wire objects stop at the projection: caches and stores only ever see views.
 */

/** The view-level side of a list-watch, implemented by the caches and stores of watch/. */
export interface ViewSink<V> {
  replace(views: readonly V[]): void;
  upsert(view: V): void;
  remove(view: V): void;
  /**
   * The first list of one namespace that could not be listed when the others were (scoped mode,
   * ADR 0021): stored as an initial list is, with no creations. A sink without it gets `replace`.
   */
  seedNamespace?(namespace: string, views: readonly V[]): void;
}

/** A SecretProviderClassPodStatus reduced to what §4.4 needs (§9.2 item 2). */
export interface PodStatusView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** RFC 3339, as served. */
  readonly creationTimestamp: string | undefined;
  /** `status.secretProviderClassName`. */
  readonly className: string;
  /** §4.1 SPCPS hash of `status.objects` and the class name. */
  readonly hash: string;
}

/** A SecretProviderClass, metadata only (§9.2 item 2): it supplies S for its sources. */
export interface ProviderClassView {
  readonly namespace: string;
  readonly name: string;
  /** Only the configured `ignore` and `match` keys, when present. */
  readonly annotations: Readonly<Record<string, string>>;
  /** `metadata.labels`, only with `--enable-reload-policies` (policy source selectors). */
  readonly labels?: Readonly<Record<string, string>> | undefined;
}
