/**
 * Fluent test-data builders for the core views. Every `with…` returns a new builder, so a partly built
 * builder can be shared between cases without one case leaking into another.
 *
 *   aWorkload('Deployment', 'ns', 'api')
 *     .withAnnotation(keys.auto, 'true')
 *     .withContainer(aContainer('app').withEnvFrom('configmap', 'cfg'))
 *     .withVolume(configMapVolume('config', 'cfg'))
 *     .build();
 */
import type {
  Annotations,
  ContainerView,
  OwnerView,
  PodSpecView,
  SourceType,
  SourceView,
  VolumeView,
  WorkloadKindName,
  WorkloadView,
} from '../core/types.ts';

/** SHA-1 of the empty input: the hash of an empty ConfigMap or Secret. */
export const EMPTY_HASH = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';

export type EnvSourceKind = 'configmap' | 'secret';

interface Buildable<T> {
  build(): T;
}

function isBuildable<T>(item: T | Buildable<T>): item is Buildable<T> {
  return typeof item === 'object' && item !== null && 'build' in item;
}

function built<T>(item: T | Buildable<T>): T {
  return isBuildable(item) ? item.build() : item;
}

export class ContainerBuilder implements Buildable<ContainerView> {
  readonly #view: ContainerView;

  constructor(view: ContainerView) {
    this.#view = view;
  }

  /** `envFrom[].configMapRef` / `secretRef`. */
  withEnvFrom(kind: EnvSourceKind, name: string): ContainerBuilder {
    return kind === 'configmap'
      ? new ContainerBuilder({ ...this.#view, envConfigMaps: [...this.#view.envConfigMaps, name] })
      : new ContainerBuilder({ ...this.#view, envSecrets: [...this.#view.envSecrets, name] });
  }

  /** `env[].valueFrom.configMapKeyRef` / `secretKeyRef`: the projection keeps it like envFrom. */
  withEnvKeyRef(kind: EnvSourceKind, name: string): ContainerBuilder {
    return this.withEnvFrom(kind, name);
  }

  withVolumeMount(volumeName: string): ContainerBuilder {
    return new ContainerBuilder({
      ...this.#view,
      volumeMounts: [...this.#view.volumeMounts, volumeName],
    });
  }

  withStakaterEnv(name: string, value: string): ContainerBuilder {
    return new ContainerBuilder({
      ...this.#view,
      stakaterEnv: { ...this.#view.stakaterEnv, [name]: value },
    });
  }

  build(): ContainerView {
    return this.#view;
  }
}

export function aContainer(name: string): ContainerBuilder {
  return new ContainerBuilder({
    name,
    stakaterEnv: {},
    envConfigMaps: [],
    envSecrets: [],
    volumeMounts: [],
  });
}

export class VolumeBuilder implements Buildable<VolumeView> {
  readonly #view: VolumeView;

  constructor(view: VolumeView) {
    this.#view = view;
  }

  /** `configMap.name`, or one `projected.sources[].configMap.name`. */
  withConfigMap(name: string): VolumeBuilder {
    return new VolumeBuilder({ ...this.#view, configMaps: [...this.#view.configMaps, name] });
  }

  /** `secret.secretName`, or one `projected.sources[].secret.name`. */
  withSecret(name: string): VolumeBuilder {
    return new VolumeBuilder({ ...this.#view, secrets: [...this.#view.secrets, name] });
  }

  /** `csi.volumeAttributes.secretProviderClass`. */
  withSecretProviderClass(name: string): VolumeBuilder {
    return new VolumeBuilder({ ...this.#view, secretProviderClass: name });
  }

  build(): VolumeView {
    return this.#view;
  }
}

export function aVolume(name: string): VolumeBuilder {
  return new VolumeBuilder({ name, configMaps: [], secrets: [], secretProviderClass: undefined });
}

export function configMapVolume(volumeName: string, configMap: string): VolumeView {
  return aVolume(volumeName).withConfigMap(configMap).build();
}

export function secretVolume(volumeName: string, secret: string): VolumeView {
  return aVolume(volumeName).withSecret(secret).build();
}

export function csiVolume(volumeName: string, secretProviderClass: string): VolumeView {
  return aVolume(volumeName).withSecretProviderClass(secretProviderClass).build();
}

export class PodSpecBuilder implements Buildable<PodSpecView> {
  readonly #view: PodSpecView;

  constructor(view: PodSpecView) {
    this.#view = view;
  }

  withContainer(container: ContainerView | ContainerBuilder): PodSpecBuilder {
    return new PodSpecBuilder({
      ...this.#view,
      containers: [...this.#view.containers, built(container)],
    });
  }

  withInitContainer(container: ContainerView | ContainerBuilder): PodSpecBuilder {
    return new PodSpecBuilder({
      ...this.#view,
      initContainers: [...this.#view.initContainers, built(container)],
    });
  }

  withVolume(volume: VolumeView | VolumeBuilder): PodSpecBuilder {
    return new PodSpecBuilder({ ...this.#view, volumes: [...this.#view.volumes, built(volume)] });
  }

  build(): PodSpecView {
    return this.#view;
  }
}

export function aPodSpec(): PodSpecBuilder {
  return new PodSpecBuilder({ containers: [], initContainers: [], volumes: [] });
}

export class WorkloadBuilder implements Buildable<WorkloadView> {
  readonly #view: WorkloadView;

  constructor(view: WorkloadView) {
    this.#view = view;
  }

  #with(patch: Partial<WorkloadView>): WorkloadBuilder {
    return new WorkloadBuilder({ ...this.#view, ...patch });
  }

  /** W: workload `metadata.annotations`. */
  withAnnotation(key: string, value: string): WorkloadBuilder {
    return this.#with({ annotations: { ...this.#view.annotations, [key]: value } });
  }

  withAnnotations(annotations: Annotations): WorkloadBuilder {
    return this.#with({ annotations: { ...this.#view.annotations, ...annotations } });
  }

  /** PT: pod-template annotations. */
  withTemplateAnnotation(key: string, value: string): WorkloadBuilder {
    return this.#with({ templateAnnotations: { ...this.#view.templateAnnotations, [key]: value } });
  }

  withTemplateAnnotations(annotations: Annotations): WorkloadBuilder {
    return this.#with({
      templateAnnotations: { ...this.#view.templateAnnotations, ...annotations },
    });
  }

  withContainer(container: ContainerView | ContainerBuilder): WorkloadBuilder {
    return this.withPodSpec(new PodSpecBuilder(this.#view.podSpec).withContainer(container));
  }

  withInitContainer(container: ContainerView | ContainerBuilder): WorkloadBuilder {
    return this.withPodSpec(new PodSpecBuilder(this.#view.podSpec).withInitContainer(container));
  }

  withVolume(volume: VolumeView | VolumeBuilder): WorkloadBuilder {
    return this.withPodSpec(new PodSpecBuilder(this.#view.podSpec).withVolume(volume));
  }

  withPodSpec(podSpec: PodSpecView | PodSpecBuilder): WorkloadBuilder {
    return this.#with({ podSpec: built(podSpec) });
  }

  withUid(uid: string): WorkloadBuilder {
    return this.#with({ uid });
  }

  withResourceVersion(resourceVersion: string): WorkloadBuilder {
    return this.#with({ resourceVersion });
  }

  withGeneration(generation: number): WorkloadBuilder {
    return this.#with({ generation });
  }

  withCreationTimestamp(creationTimestamp: string): WorkloadBuilder {
    return this.#with({ creationTimestamp });
  }

  withController(controller: OwnerView): WorkloadBuilder {
    return this.#with({ controller });
  }

  paused(paused = true): WorkloadBuilder {
    return this.#with({ paused });
  }

  suspended(suspended = true): WorkloadBuilder {
    return this.#with({ suspended });
  }

  withManualSelector(manualSelector = true): WorkloadBuilder {
    return this.#with({ manualSelector });
  }

  withWorkloadRef(hasWorkloadRef = true): WorkloadBuilder {
    return this.#with({ hasWorkloadRef });
  }

  withConfigChangeTrigger(hasConfigChangeTrigger = true): WorkloadBuilder {
    return this.#with({ hasConfigChangeTrigger });
  }

  build(): WorkloadView {
    return this.#view;
  }
}

export function aWorkload(
  kind: WorkloadKindName,
  namespace: string,
  name: string,
): WorkloadBuilder {
  return new WorkloadBuilder({
    ref: { kind, namespace, name },
    uid: `uid-${kind}-${namespace}-${name}`.toLowerCase(),
    resourceVersion: '1',
    generation: 1,
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: {},
    templateAnnotations: {},
    podSpec: aPodSpec().build(),
    controller: undefined,
    paused: false,
    suspended: false,
    manualSelector: false,
    hasWorkloadRef: false,
    hasConfigChangeTrigger: false,
  });
}

export class SourceBuilder implements Buildable<SourceView> {
  readonly #view: SourceView;

  constructor(view: SourceView) {
    this.#view = view;
  }

  #with(patch: Partial<SourceView>): SourceBuilder {
    return new SourceBuilder({ ...this.#view, ...patch });
  }

  withHash(hash: string): SourceBuilder {
    return this.#with({ hash });
  }

  withUid(uid: string): SourceBuilder {
    return this.#with({ uid });
  }

  withResourceVersion(resourceVersion: string): SourceBuilder {
    return this.#with({ resourceVersion });
  }

  withCreationTimestamp(creationTimestamp: string | undefined): SourceBuilder {
    return this.#with({ creationTimestamp });
  }

  /** S: only the `ignore` and `match` keys are kept on a real view. */
  withAnnotation(key: string, value: string): SourceBuilder {
    return this.#with({ annotations: { ...this.#view.annotations, [key]: value } });
  }

  build(): SourceView {
    return this.#view;
  }
}

export function aSource(type: SourceType, namespace: string, name: string): SourceBuilder {
  return new SourceBuilder({
    ref: { type, namespace, name },
    uid: `uid-${type}-${namespace}-${name}`.toLowerCase(),
    resourceVersion: '1',
    creationTimestamp: '2026-01-01T00:00:00Z',
    hash: EMPTY_HASH,
    annotations: {},
  });
}

export function aConfigMap(namespace: string, name: string): SourceBuilder {
  return aSource('CONFIGMAP', namespace, name);
}

export function aSecret(namespace: string, name: string): SourceBuilder {
  return aSource('SECRET', namespace, name);
}
