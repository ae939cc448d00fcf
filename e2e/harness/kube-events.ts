// The core/v1 Events kreload records (spec §13.3), read back as the admin.
import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';

export interface InvolvedObject {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

export interface RecordedEvent {
  readonly reason: string;
  readonly type: string;
  readonly message: string;
  readonly count: number;
}

function isFromKreload(event: CoreV1Event): boolean {
  return event.source?.component === 'kreload' || event.reportingComponent === 'kreload';
}

export class EventReader {
  readonly #core: CoreV1Api;

  constructor(deps: { kc: KubeConfig }) {
    this.#core = deps.kc.makeApiClient(CoreV1Api);
  }

  /** kreload's Events about one object, oldest first. */
  async about(object: InvolvedObject): Promise<RecordedEvent[]> {
    const { items } = await this.#core.listNamespacedEvent({
      namespace: object.namespace,
      fieldSelector: `involvedObject.kind=${object.kind},involvedObject.name=${object.name}`,
    });
    return items.filter(isFromKreload).map((event) => ({
      reason: event.reason ?? '',
      type: event.type ?? '',
      message: event.message ?? '',
      count: event.count ?? 1,
    }));
  }

  async reasonsAbout(object: InvolvedObject): Promise<string[]> {
    return (await this.about(object)).map((event) => event.reason);
  }
}
