/** Which container of a pod spec refers to a source (§3.6). */
import { sourceKey } from './keys.ts';
import type { ContainerView, PodSpecView, SourceKey, SourceType, VolumeView } from './types.ts';

function volumeRefersTo(volume: VolumeView, type: SourceType, name: string): boolean {
  switch (type) {
    case 'CONFIGMAP':
      return volume.configMaps.includes(name);
    case 'SECRET':
      return volume.secrets.includes(name);
    case 'SECRETPROVIDERCLASS':
      return volume.secretProviderClass === name;
  }
}

/** SPCs are only ever mounted through CSI volumes: they have no env references. */
function envNames(container: ContainerView, type: SourceType): readonly string[] {
  switch (type) {
    case 'CONFIGMAP':
      return container.envConfigMaps;
    case 'SECRET':
      return container.envSecrets;
    case 'SECRETPROVIDERCLASS':
      return [];
  }
}

type Selection = { found: true; container: string | undefined } | { found: false };

const NOT_FOUND: Selection = { found: false };

/**
 * A reference found only in init containers moves to the first regular container, as in Reloader: init
 * containers are never written.
 */
function selectAmong(pod: PodSpecView, refers: (container: ContainerView) => boolean): Selection {
  const regular = pod.containers.find(refers);
  if (regular !== undefined) return { found: true, container: regular.name };
  if (pod.initContainers.some(refers)) return { found: true, container: pod.containers[0]?.name };
  return NOT_FOUND;
}

function selectByVolume(pod: PodSpecView, type: SourceType, name: string): Selection {
  // Only the first volume that refers to the source counts, as in Reloader.
  const volume = pod.volumes.find((v) => volumeRefersTo(v, type, name));
  if (volume === undefined) return NOT_FOUND;
  return selectAmong(pod, (container) => container.volumeMounts.includes(volume.name));
}

function selectByEnv(pod: PodSpecView, type: SourceType, name: string): Selection {
  return selectAmong(pod, (container) => envNames(container, type).includes(name));
}

/**
 * The name of the container that carries the env var or is named in `containerRefs`, or undefined for
 * "none". With `forList` (the decision is LIST) an unreferenced source goes to the first regular container;
 * otherwise undefined means "not referenced".
 */
export function selectContainer(
  pod: PodSpecView,
  type: SourceType,
  name: string,
  forList: boolean,
): string | undefined {
  const byVolume = selectByVolume(pod, type, name);
  if (byVolume.found) return byVolume.container;
  const byEnv = selectByEnv(pod, type, name);
  if (byEnv.found) return byEnv.container;
  return forList ? pod.containers[0]?.name : undefined;
}

function volumeKeys(volume: VolumeView): SourceKey[] {
  const keys = [
    ...volume.configMaps.map((name) => sourceKey('CONFIGMAP', name)),
    ...volume.secrets.map((name) => sourceKey('SECRET', name)),
  ];
  if (volume.secretProviderClass !== undefined) {
    keys.push(sourceKey('SECRETPROVIDERCLASS', volume.secretProviderClass));
  }
  return keys;
}

function containerKeys(container: ContainerView): SourceKey[] {
  return [
    ...container.envConfigMaps.map((name) => sourceKey('CONFIGMAP', name)),
    ...container.envSecrets.map((name) => sourceKey('SECRET', name)),
  ];
}

/**
 * Every source key the pod spec names anywhere (volumes, also unmounted ones, env and envFrom of regular
 * and init containers), each once, in order of first appearance. It feeds the index (§9.2 (a)), which may
 * over-approximate: the decision narrows it down.
 */
export function referencedSources(pod: PodSpecView): readonly SourceKey[] {
  const keys = new Set<SourceKey>([
    ...pod.volumes.flatMap(volumeKeys),
    ...pod.containers.flatMap(containerKeys),
    ...pod.initContainers.flatMap(containerKeys),
  ]);
  return [...keys];
}
