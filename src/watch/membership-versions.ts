/**
 * Which objects a namespace holds and with which labels, as a number that changes whenever that
 * does: the policy index (docs/reload-policy.md) is rebuilt only when the version it was built at
 * is no longer current, not on every event. A change of data or annotations keeps the version.
 */
export class MembershipVersions {
  #tick = 0;
  #floor = 0;
  readonly #byNamespace = new Map<string, number>();

  /** An object of `namespace` appeared, went, or its labels changed. */
  bump(namespace: string): void {
    this.#tick += 1;
    this.#byNamespace.set(namespace, this.#tick);
  }

  /** Every namespace may have changed (a cache seeded from a full list). */
  bumpAll(): void {
    this.#tick += 1;
    this.#floor = this.#tick;
  }

  of(namespace: string): number {
    return Math.max(this.#floor, this.#byNamespace.get(namespace) ?? 0);
  }
}
