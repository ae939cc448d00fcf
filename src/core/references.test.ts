import { describe, expect, it } from 'vitest';
import {
  aContainer,
  aPodSpec,
  aVolume,
  configMapVolume,
  csiVolume,
  secretVolume,
} from '../testing/builders.ts';
import { referencedSources, selectContainer } from './references.ts';
import type { PodSpecView, SourceType } from './types.ts';

interface Case {
  name: string;
  pod: PodSpecView;
  type: SourceType;
  source: string;
  /** Expected for a non-LIST decision (undefined = not referenced). */
  auto: string | undefined;
  /** Expected for a LIST decision. */
  list: string | undefined;
}

const cases: Case[] = [
  {
    name: 'ConfigMap volume mounted by the second container',
    pod: aPodSpec()
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b').withVolumeMount('cfg'))
      .withVolume(configMapVolume('cfg', 'cm'))
      .build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: 'b',
    list: 'b',
  },
  {
    name: 'first regular container mounting the volume wins',
    pod: aPodSpec()
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b').withVolumeMount('cfg'))
      .withContainer(aContainer('c').withVolumeMount('cfg'))
      .withVolume(configMapVolume('cfg', 'cm'))
      .build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: 'b',
    list: 'b',
  },
  {
    name: 'projected ConfigMap source',
    pod: aPodSpec()
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b').withVolumeMount('proj'))
      .withVolume(aVolume('proj').withSecret('s').withConfigMap('cm'))
      .build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: 'b',
    list: 'b',
  },
  {
    name: 'projected Secret source',
    pod: aPodSpec()
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b').withVolumeMount('proj'))
      .withVolume(aVolume('proj').withConfigMap('cm').withSecret('s'))
      .build(),
    type: 'SECRET',
    source: 's',
    auto: 'b',
    list: 'b',
  },
  {
    name: 'only the first volume referring to the source counts',
    pod: aPodSpec()
      .withContainer(aContainer('a').withVolumeMount('second'))
      .withContainer(aContainer('b').withVolumeMount('first'))
      .withVolume(configMapVolume('first', 'cm'))
      .withVolume(configMapVolume('second', 'cm'))
      .build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: 'b',
    list: 'b',
  },
  {
    name: 'volume mounted only by an init container → first regular container',
    pod: aPodSpec()
      .withInitContainer(aContainer('init').withVolumeMount('cfg'))
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b'))
      .withVolume(configMapVolume('cfg', 'cm'))
      .build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: 'a',
    list: 'a',
  },
  {
    name: 'volume mounted only by an init container, no regular containers → none',
    pod: aPodSpec()
      .withInitContainer(aContainer('init').withVolumeMount('cfg'))
      .withVolume(configMapVolume('cfg', 'cm'))
      .build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: undefined,
    list: undefined,
  },
  {
    name: 'volume mounted by nobody, env reference in the second container',
    pod: aPodSpec()
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b').withEnvFrom('configmap', 'cm'))
      .withVolume(configMapVolume('cfg', 'cm'))
      .build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: 'b',
    list: 'b',
  },
  {
    name: 'volume mounted by nobody and no env reference → not referenced',
    pod: aPodSpec()
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b'))
      .withVolume(configMapVolume('cfg', 'cm'))
      .build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: undefined,
    list: 'a',
  },
  {
    name: 'volume mount beats an earlier env reference',
    pod: aPodSpec()
      .withContainer(aContainer('a').withEnvFrom('secret', 's'))
      .withContainer(aContainer('b').withVolumeMount('sec'))
      .withVolume(secretVolume('sec', 's'))
      .build(),
    type: 'SECRET',
    source: 's',
    auto: 'b',
    list: 'b',
  },
  {
    name: 'init-container volume mount beats a regular env reference',
    pod: aPodSpec()
      .withInitContainer(aContainer('init').withVolumeMount('sec'))
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b').withEnvFrom('secret', 's'))
      .withVolume(secretVolume('sec', 's'))
      .build(),
    type: 'SECRET',
    source: 's',
    auto: 'a',
    list: 'a',
  },
  {
    name: 'env key ref of a Secret',
    pod: aPodSpec()
      .withContainer(aContainer('a').withEnvFrom('configmap', 's'))
      .withContainer(aContainer('b').withEnvKeyRef('secret', 's'))
      .build(),
    type: 'SECRET',
    source: 's',
    auto: 'b',
    list: 'b',
  },
  {
    name: 'env reference only in an init container → first regular container',
    pod: aPodSpec()
      .withInitContainer(aContainer('init').withEnvFrom('configmap', 'cm'))
      .withContainer(aContainer('a'))
      .build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: 'a',
    list: 'a',
  },
  {
    name: 'env reference only in an init container, no regular containers → none',
    pod: aPodSpec().withInitContainer(aContainer('init').withEnvFrom('configmap', 'cm')).build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: undefined,
    list: undefined,
  },
  {
    name: 'a ConfigMap reference does not reference a Secret of the same name',
    pod: aPodSpec()
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b').withEnvFrom('configmap', 'x').withVolumeMount('v'))
      .withVolume(configMapVolume('v', 'x'))
      .build(),
    type: 'SECRET',
    source: 'x',
    auto: undefined,
    list: 'a',
  },
  {
    name: 'SPC through a CSI volume',
    pod: aPodSpec()
      .withContainer(aContainer('a'))
      .withContainer(aContainer('b').withVolumeMount('vault'))
      .withVolume(csiVolume('vault', 'spc'))
      .build(),
    type: 'SECRETPROVIDERCLASS',
    source: 'spc',
    auto: 'b',
    list: 'b',
  },
  {
    name: 'SPC has no env references: a Secret env ref of the same name does not count',
    pod: aPodSpec().withContainer(aContainer('a').withEnvFrom('secret', 'spc')).build(),
    type: 'SECRETPROVIDERCLASS',
    source: 'spc',
    auto: undefined,
    list: 'a',
  },
  {
    name: 'no reference at all',
    pod: aPodSpec().withContainer(aContainer('a')).withContainer(aContainer('b')).build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: undefined,
    list: 'a',
  },
  {
    name: 'no containers at all',
    pod: aPodSpec().build(),
    type: 'CONFIGMAP',
    source: 'cm',
    auto: undefined,
    list: undefined,
  },
];

describe('selectContainer (§3.6)', () => {
  it.each(cases)('$name', ({ pod, type, source, auto, list }) => {
    expect(selectContainer(pod, type, source, false)).toBe(auto);
    expect(selectContainer(pod, type, source, true)).toBe(list);
  });
});

describe('referencedSources', () => {
  it('lists every source named by volumes, env and init containers once, in order', () => {
    const pod = aPodSpec()
      .withContainer(
        aContainer('a').withEnvFrom('configmap', 'env-cm').withEnvKeyRef('secret', 'db'),
      )
      .withContainer(aContainer('b').withEnvFrom('configmap', 'cfg'))
      .withInitContainer(aContainer('init').withEnvFrom('secret', 'init-secret'))
      .withVolume(configMapVolume('v1', 'cfg'))
      .withVolume(aVolume('proj').withConfigMap('proj-cm').withSecret('proj-secret'))
      .withVolume(secretVolume('v2', 'db'))
      .withVolume(csiVolume('v3', 'vault'))
      .build();
    expect(referencedSources(pod)).toEqual([
      'configmap/cfg',
      'configmap/proj-cm',
      'secret/proj-secret',
      'secret/db',
      'secretproviderclass/vault',
      'configmap/env-cm',
      'secret/init-secret',
    ]);
  });

  it('is empty for a pod without references', () => {
    expect(referencedSources(aPodSpec().withContainer(aContainer('a')).build())).toEqual([]);
  });
});
