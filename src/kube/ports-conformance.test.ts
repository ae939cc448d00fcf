/**
 * Compile-time checks (enforced by `tsc`) that kube/ fits the ports other modules declare; the
 * adapters that `implement` a port (EventClient, LeaseClient, KubeWorkloadWriter) are checked at
 * their declaration.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { SourceView } from '../core/types.ts';
import type {
  ListWatchConsumer as WatchPortConsumer,
  PodStatusView,
  ProviderClassView,
  Projection,
} from '../watch/ports.ts';
import type { JsonObject } from '../core/json.ts';
import type { ListWatchConsumer } from './list-watch.ts';
import type {
  projectConfigMap,
  projectNamespaceName,
  projectSecretProviderClass,
  projectSecretProviderClassPodStatus,
} from './projections.ts';

describe('port conformance', () => {
  it("watch/'s consumer can be fed by a raw ListWatch", () => {
    expectTypeOf<WatchPortConsumer>().toExtend<ListWatchConsumer<JsonObject>>();
  });

  it("projections fit watch/'s Projection", () => {
    expectTypeOf<(obj: unknown) => ReturnType<typeof projectConfigMap>>().toExtend<
      Projection<SourceView>
    >();
    expectTypeOf<typeof projectSecretProviderClassPodStatus>().toExtend<
      Projection<PodStatusView>
    >();
    expectTypeOf<(obj: unknown) => ReturnType<typeof projectSecretProviderClass>>().toExtend<
      Projection<ProviderClassView>
    >();
    expectTypeOf<typeof projectNamespaceName>().toExtend<Projection<string>>();
  });
});
