import { describe, expect, it } from 'vitest';
import { splitEvents, summarisePhase } from './audit-summary.ts';

const USER = 'system:serviceaccount:kreload-system:kreload';

function line(
  verb: string,
  resource: string,
  details: { stage?: string; code?: number; user?: string } = {},
): string {
  return JSON.stringify({
    stage: details.stage ?? 'ResponseComplete',
    verb,
    user: { username: details.user ?? USER },
    objectRef: { resource },
    responseStatus: { code: details.code ?? 200 },
    requestURI: `/x/${resource}`,
  });
}

describe('splitEvents', () => {
  it('puts each complete line on the side of the split where it starts, dropping cut lines', () => {
    const first = line('list', 'deployments');
    const second = line('get', 'deployments');
    const text = `{"cut":\n${first}\n${second}\n`;
    const from = 1000;
    const split = from + Buffer.byteLength(`{"cut":\n${first}\n`);
    const { before, after } = splitEvents(text, { from, split });
    expect(before.map((e) => e.verb)).toEqual(['list']);
    expect(after.map((e) => e.verb)).toEqual(['get']);
  });
});

describe('summarisePhase', () => {
  it('counts by verb and resource, watches when opened, workload LIST/GET, and errors', () => {
    const text = [
      line('list', 'deployments'),
      line('get', 'statefulsets'),
      line('list', 'configmaps'),
      line('watch', 'deployments', { stage: 'ResponseStarted' }),
      line('watch', 'deployments', { stage: 'ResponseComplete' }),
      line('patch', 'deployments', { code: 409 }),
      line('patch', 'deployments'),
      line('list', 'deployments', { user: 'someone-else' }),
      JSON.stringify({
        stage: 'ResponseComplete',
        verb: 'get',
        user: { username: USER },
        requestURI: '/version?timeout=32s',
        responseStatus: { code: 200 },
      }),
    ].join('\n');
    const { before } = splitEvents(`${text}\n`, { from: 0, split: Infinity });
    expect(summarisePhase(before, USER)).toEqual({
      total: 7,
      byVerb: {
        'get /version': 1,
        'get statefulsets': 1,
        'list configmaps': 1,
        'list deployments': 1,
        'patch deployments': 2,
        'watch deployments': 1,
      },
      workloadListGet: 2,
      errors: { 'patch deployments 409': 1 },
    });
  });
});
