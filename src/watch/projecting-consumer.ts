import type { ListWatchConsumer, Projection, ViewSink } from './ports.ts';

export type ConsumerOperation = 'replace' | 'upsert' | 'remove';

export interface ProjectingConsumerDeps<V> {
  readonly project: Projection<V>;
  readonly sink: ViewSink<V>;
  /** An object the projection rejected (`reloader_events_processed_total{result="dropped"}`). */
  readonly onMalformed?: ((operation: ConsumerOperation) => void) | undefined;
}

/** Adapts a view sink to the list-watch consumer: projects each object, drops malformed ones. */
export function createProjectingConsumer<V>(deps: ProjectingConsumerDeps<V>): ListWatchConsumer {
  const { project, sink, onMalformed } = deps;
  const projected = (obj: unknown, operation: ConsumerOperation): V | undefined => {
    const view = project(obj);
    if (view === undefined) onMalformed?.(operation);
    return view;
  };
  return {
    replace: (items) => {
      const views: V[] = [];
      for (const item of items) {
        const view = projected(item, 'replace');
        if (view !== undefined) views.push(view);
      }
      sink.replace(views);
    },
    upsert: (obj) => {
      const view = projected(obj, 'upsert');
      if (view !== undefined) sink.upsert(view);
    },
    remove: (obj) => {
      const view = projected(obj, 'remove');
      if (view !== undefined) sink.remove(view);
    },
  };
}
