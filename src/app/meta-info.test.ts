import { describe, expect, it } from 'vitest';
import { parseOptions } from '../config/parse-options.ts';
import { metaInfoConfigMap } from './meta-info.ts';

describe('metaInfoConfigMap', () => {
  it('labels the ConfigMap, names the edition and redacts webhook URLs', async () => {
    const options = await parseOptions(
      ['--webhook-url=https://hooks.example/T0/secret-token?x=1'],
      {
        RELOADER_NAMESPACE: 'kreload-system',
        RELOADER_DEPLOYMENT_NAME: 'kreload',
      },
    );
    const cm = metaInfoConfigMap({
      options,
      namespace: 'kreload-system',
      build: {
        nodeVersion: 'v24.21.0',
        releaseVersion: '0.1.0',
        commitHash: 'abc',
        commitTime: '',
      },
    });
    expect(cm.metadata).toEqual({
      name: 'reloader-meta-info',
      namespace: 'kreload-system',
      labels: { 'reloader.stakater.com/meta-info': 'reloader' },
    });
    const data = cm.data as Record<string, string>;
    expect(JSON.parse(data.buildInfo ?? '')).toEqual({
      nodeVersion: 'v24.21.0',
      releaseVersion: '0.1.0',
      commitHash: 'abc',
      commitTime: '',
      edition: 'kreload',
    });
    expect(data.reloaderOptions).not.toContain('secret-token');
    expect(JSON.parse(data.reloaderOptions ?? '')).toMatchObject({ reloadStrategy: 'env-vars' });
    expect(JSON.parse(data.deploymentInfo ?? '')).toEqual({
      name: 'kreload',
      namespace: 'kreload-system',
    });
  });
});
