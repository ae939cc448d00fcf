import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { AuditLog } from './audit.js';

function line(verb: string): string {
  return JSON.stringify({ stage: 'ResponseComplete', verb, user: { username: 'u' } }) + '\n';
}

describe('AuditLog', () => {
  let dir = '';
  let path = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'audit-'));
    path = join(dir, 'audit.log');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const cases: readonly {
    name: string;
    before: string;
    after: string;
    verbs: readonly string[];
  }[] = [
    { name: 'a mark at a line end', before: line('get'), after: line('patch'), verbs: ['patch'] },
    {
      name: 'a mark in the middle of a line still being written',
      before: line('get') + line('list').slice(0, 20),
      after: line('list').slice(20) + line('patch'),
      verbs: ['patch'],
    },
    {
      name: 'a line still being written at the read',
      before: '',
      after: line('patch') + line('list').slice(0, 20),
      verbs: ['patch'],
    },
    { name: 'an empty log', before: '', after: line('watch'), verbs: ['watch'] },
  ];

  it.each(cases)('reads only whole lines written after $name', async ({ before, after, verbs }) => {
    await writeFile(path, before);
    const log = new AuditLog({ path });
    const offset = await log.mark();
    await appendFile(path, after);
    expect((await log.eventsSince(offset)).map((event) => event.verb)).toEqual(verbs);
  });
});
