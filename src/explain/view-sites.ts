/**
 * Where a projected pod spec (the controller's WorkloadView) names each source. The projection keeps
 * which containers read a source through env and which volumes they mount, not whether env came
 * from `envFrom` or `valueFrom` nor whether a volume is projected: the controller's answer says
 * `env` and `volume`, the CLI (which reads the raw template) says which.
 */
import { sourceKey } from '../core/keys.ts';
import type { ContainerView, PodSpecView, SourceKey, SourceType } from '../core/types.ts';
import type { ReferenceSite } from './model.ts';

type Sites = Map<SourceKey, ReferenceSite[]>;

function add(sites: Sites, type: SourceType, name: string, site: ReferenceSite): void {
  const key = sourceKey(type, name);
  const list = sites.get(key) ?? [];
  sites.set(key, [...list, site]);
}

export function viewReferenceSites(pod: PodSpecView): ReadonlyMap<SourceKey, ReferenceSite[]> {
  const sites: Sites = new Map();
  const containers: { readonly c: ContainerView; readonly init: boolean }[] = [
    ...pod.containers.map((c) => ({ c, init: false })),
    ...pod.initContainers.map((c) => ({ c, init: true })),
  ];
  for (const { c, init } of containers) {
    const site = { container: c.name, init, via: 'env' as const };
    for (const name of new Set(c.envConfigMaps)) add(sites, 'CONFIGMAP', name, site);
    for (const name of new Set(c.envSecrets)) add(sites, 'SECRET', name, site);
  }
  for (const volume of pod.volumes) {
    const mounting = containers.filter(({ c }) => c.volumeMounts.includes(volume.name));
    const refs = [
      ...volume.configMaps.map((name) => ({ type: 'CONFIGMAP' as const, name, via: 'volume' })),
      ...volume.secrets.map((name) => ({ type: 'SECRET' as const, name, via: 'volume' })),
      ...(volume.secretProviderClass === undefined
        ? []
        : [
            {
              type: 'SECRETPROVIDERCLASS' as const,
              name: volume.secretProviderClass,
              via: 'csi volume',
            },
          ]),
    ] as const;
    for (const ref of refs) {
      const via = ref.via === 'csi volume' ? 'csi volume' : 'volume';
      if (mounting.length === 0) {
        add(sites, ref.type, ref.name, {
          container: undefined,
          init: false,
          via: 'unmounted volume',
          volume: volume.name,
        });
      }
      for (const { c, init } of mounting) {
        add(sites, ref.type, ref.name, { container: c.name, init, via, volume: volume.name });
      }
    }
  }
  return sites;
}
