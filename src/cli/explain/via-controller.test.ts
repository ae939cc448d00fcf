import { describe, expect, it } from 'vitest';
import { controllerReply, debugExplainUrl } from './via-controller.ts';

describe('debugExplainUrl', () => {
  it.each([
    ['http://127.0.0.1:9090', 'http://127.0.0.1:9090/debug/explain?kind=cm&name=a'],
    ['http://127.0.0.1:9090/', 'http://127.0.0.1:9090/debug/explain?kind=cm&name=a'],
    [
      'http://127.0.0.1:8001/api/v1/namespaces/k/pods/p:9090/proxy',
      'http://127.0.0.1:8001/api/v1/namespaces/k/pods/p:9090/proxy/debug/explain?kind=cm&name=a',
    ],
  ])('%s', (base, expected) => {
    expect(debugExplainUrl(base, { kind: 'cm', name: 'a' }).href).toBe(expected);
  });
});

describe('controllerReply', () => {
  const report = { config: { kind: 'controller' }, assumptions: [] };
  it.each([
    [200, JSON.stringify(report), { outcome: 'explained', report }],
    [400, '{"error":"missing parameter \\"name\\""}', { outcome: 'usage' }],
    [404, '{"error":"Deployment a/b is not in the controller\'s cache"}', { outcome: 'not-found' }],
    [
      404,
      'not found',
      { outcome: 'usage', message: expect.stringContaining('--enable-debug-explain') as unknown },
    ],
    [
      503,
      '{"error":"not synced"}',
      { outcome: 'failure', message: 'the controller answered 503: not synced' },
    ],
    [500, 'internal error', { outcome: 'failure' }],
    [200, 'not json', { outcome: 'failure' }],
  ])('%i %s', (status, body, expected) => {
    expect(controllerReply(status, body)).toMatchObject(expected);
  });
});
