/** Configured kind rows the tests share (docs/custom-kinds.md). */
import { configuredKindRow } from '../rollout/kinds.ts';

/** A custom resource without a pod template: its pods, found by `spec.selector`, roll by eviction. */
export const GADGET_ROW = configuredKindRow({
  group: 'example.kreload.io',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  shortNames: [],
  templatePath: undefined,
  strategies: ['evict'],
  pods: {
    selectorPath: ['spec', 'selector'],
    owners: 'direct',
    desiredPath: ['spec', 'replicas'],
    maxUnavailablePath: [],
  },
  status: undefined,
});
