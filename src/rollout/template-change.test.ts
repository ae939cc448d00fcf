import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../core/json.ts';
import { applyTemplateChange, containersWithEnv } from './template-change.ts';

const H = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';

describe('applyTemplateChange', () => {
  const template: JsonObject = {
    metadata: {
      annotations: { keep: 'me', 'kreload.io/source-hashes': '{}' },
    },
    spec: {
      containers: [
        { name: 'a', env: [{ name: 'STAKATER_X_SECRET', valueFrom: { secretKeyRef: {} } }] },
        { name: 'b' },
      ],
    },
  };

  it('sets and removes PT annotations and sets env vars by container', () => {
    const next = applyTemplateChange(template, {
      envWrites: [
        { container: 'b', name: 'STAKATER_Z_CONFIGMAP', value: H },
        { container: 'a', name: 'STAKATER_X_SECRET', value: H },
        { container: 'b', name: 'STAKATER_A_CONFIGMAP', value: H },
      ],
      lastReloadedFrom: 'lrf',
      templateSourceHashes: null,
    });
    expect(next).toEqual({
      metadata: { annotations: { keep: 'me', 'reloader.stakater.com/last-reloaded-from': 'lrf' } },
      spec: {
        containers: [
          { name: 'a', env: [{ name: 'STAKATER_X_SECRET', value: H }] },
          {
            name: 'b',
            env: [
              { name: 'STAKATER_A_CONFIGMAP', value: H },
              { name: 'STAKATER_Z_CONFIGMAP', value: H },
            ],
          },
        ],
      },
    });
    expect(template.metadata).toEqual({
      annotations: { keep: 'me', 'kreload.io/source-hashes': '{}' },
    });
  });

  it('leaves a template alone when the change is empty', () => {
    expect(applyTemplateChange(template, { envWrites: [] })).toEqual(template);
  });

  it('creates metadata and containers where missing', () => {
    expect(applyTemplateChange({}, { envWrites: [], lastReloadedFrom: 'x' })).toEqual({
      metadata: { annotations: { 'reloader.stakater.com/last-reloaded-from': 'x' } },
    });
  });
});

describe('containersWithEnv', () => {
  it('ignores writes for containers that do not exist', () => {
    expect(
      containersWithEnv(
        [{ name: 'a' }],
        [{ container: 'ghost', name: 'STAKATER_G_SECRET', value: H }],
      ),
    ).toEqual([{ name: 'a' }]);
  });
});
