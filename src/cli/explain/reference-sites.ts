/**
 * Where a pod template names each source, as written: container or init container, `envFrom`,
 * `valueFrom`, volume or projected volume. Display only: which container a roll writes into comes
 * from the controller's own selectContainer (core/references.ts).
 */
import { sourceKey } from '../../core/keys.ts';
import type { SourceKey, SourceType } from '../../core/types.ts';
import type { JsonObject } from '../../core/json.ts';
import { objectsAt, stringAt } from '../../core/json.ts';
import type { ReferenceSite, ReferenceVia } from '../../explain/model.ts';

type Sites = Map<SourceKey, ReferenceSite[]>;

function add(sites: Sites, type: SourceType, name: string | undefined, site: ReferenceSite): void {
  if (name === undefined || name === '') return;
  const key = sourceKey(type, name);
  const list = sites.get(key) ?? [];
  if (!list.some((known) => JSON.stringify(known) === JSON.stringify(site))) list.push(site);
  sites.set(key, list);
}

interface VolumeRef {
  readonly type: SourceType;
  readonly name: string | undefined;
  readonly via: ReferenceVia;
}

function volumeRefs(volume: JsonObject): VolumeRef[] {
  const projected = objectsAt(volume, ['projected', 'sources']);
  return [
    { type: 'CONFIGMAP', name: stringAt(volume, ['configMap', 'name']), via: 'volume' },
    { type: 'SECRET', name: stringAt(volume, ['secret', 'secretName']), via: 'volume' },
    {
      type: 'SECRETPROVIDERCLASS',
      name: stringAt(volume, ['csi', 'volumeAttributes', 'secretProviderClass']),
      via: 'csi volume',
    },
    ...projected.flatMap((entry): VolumeRef[] => [
      { type: 'CONFIGMAP', name: stringAt(entry, ['configMap', 'name']), via: 'projected volume' },
      { type: 'SECRET', name: stringAt(entry, ['secret', 'name']), via: 'projected volume' },
    ]),
  ];
}

function addContainer(sites: Sites, container: JsonObject, init: boolean): void {
  const name = stringAt(container, ['name']);
  for (const entry of objectsAt(container, ['envFrom'])) {
    const site = { container: name, init, via: 'envFrom' as const };
    add(sites, 'CONFIGMAP', stringAt(entry, ['configMapRef', 'name']), site);
    add(sites, 'SECRET', stringAt(entry, ['secretRef', 'name']), site);
  }
  for (const entry of objectsAt(container, ['env'])) {
    const site = { container: name, init, via: 'valueFrom' as const };
    add(sites, 'CONFIGMAP', stringAt(entry, ['valueFrom', 'configMapKeyRef', 'name']), site);
    add(sites, 'SECRET', stringAt(entry, ['valueFrom', 'secretKeyRef', 'name']), site);
  }
}

/** Every source the template names, with each place it is named. */
export function referenceSites(
  template: JsonObject | undefined,
): ReadonlyMap<SourceKey, ReferenceSite[]> {
  const sites: Sites = new Map();
  const containers = objectsAt(template, ['spec', 'containers']).map((c) => ({ c, init: false }));
  const inits = objectsAt(template, ['spec', 'initContainers']).map((c) => ({ c, init: true }));
  for (const { c, init } of [...containers, ...inits]) addContainer(sites, c, init);
  for (const volume of objectsAt(template, ['spec', 'volumes'])) {
    const volumeName = stringAt(volume, ['name']);
    const mounting = [...containers, ...inits].filter(({ c }) =>
      objectsAt(c, ['volumeMounts']).some((mount) => stringAt(mount, ['name']) === volumeName),
    );
    for (const ref of volumeRefs(volume)) {
      if (mounting.length === 0) {
        add(sites, ref.type, ref.name, {
          container: undefined,
          init: false,
          via: 'unmounted volume',
          volume: volumeName,
        });
      }
      for (const { c, init } of mounting) {
        add(sites, ref.type, ref.name, {
          container: stringAt(c, ['name']),
          init,
          via: ref.via,
          volume: volumeName,
        });
      }
    }
  }
  return sites;
}
