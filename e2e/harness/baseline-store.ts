// The baseline store as kreload reads it (docs/adr/0046): the records of never-rolled workloads in
// ConfigMaps labelled kreload.io/baseline-store, in kreload's namespace (any namespace here, so a
// spec that runs kreload as outside a cluster is read too).
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { BASELINE } from './annotations.ts';

/** A workload as the store keys it (kind and namespace; the UID is asked for apart). */
interface RecordedRef {
  readonly kind: string;
  readonly namespace: string;
}

export const BASELINE_STORE_LABEL = 'kreload.io/baseline-store=true';
const RECORDED_NAMESPACE = 'kreload.io/baseline-namespace';

export class BaselineStoreReader {
  readonly #core: CoreV1Api;

  constructor(deps: { kc: KubeConfig }) {
    this.#core = deps.kc.makeApiClient(CoreV1Api);
  }

  /** The store objects recording workloads of `namespace`. */
  async objectsOf(namespace: string): Promise<V1ConfigMap[]> {
    const listed = await this.#core.listConfigMapForAllNamespaces({
      labelSelector: BASELINE_STORE_LABEL,
    });
    return listed.items.filter(
      (item) => item.metadata?.annotations?.[RECORDED_NAMESPACE] === namespace,
    );
  }

  /** Every record of `namespace`'s workloads, by data key `<kind>.<name>.<uid>`. */
  async recordsOf(namespace: string): Promise<Map<string, string>> {
    const records = new Map<string, string>();
    for (const object of await this.objectsOf(namespace)) {
      for (const [key, value] of Object.entries(object.data ?? {})) records.set(key, value);
    }
    return records;
  }

  /** The record of the workload object `uid` (data key `<kind>.<name>.<uid>`), if any. */
  async recordOf(ref: RecordedRef, uid: string): Promise<string | undefined> {
    for (const object of await this.objectsOf(ref.namespace)) {
      for (const [key, value] of Object.entries(object.data ?? {})) {
        if (key.startsWith(`${ref.kind}.`) && key.endsWith(`.${uid}`)) return value;
      }
    }
    return undefined;
  }

  /**
   * The baseline kreload holds for the workload, read as its planner reads it: W
   * `kreload.io/baseline` when W has one, else the store's record.
   */
  async baselineOf(
    ref: RecordedRef,
    view: { readonly uid: string; readonly annotations: Readonly<Record<string, string>> },
  ): Promise<string | undefined> {
    return view.annotations[BASELINE] ?? (await this.recordOf(ref, view.uid));
  }
}
