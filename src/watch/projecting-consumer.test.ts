import { describe, expect, it } from 'vitest';
import type { ViewSink } from './ports.ts';
import { createProjectingConsumer, type ConsumerOperation } from './projecting-consumer.ts';

function isNamed(obj: unknown): obj is { name: string } {
  return typeof obj === 'object' && obj !== null && 'name' in obj && typeof obj.name === 'string';
}

describe('createProjectingConsumer', () => {
  it('projects every object and drops the malformed ones', () => {
    const calls: string[] = [];
    const dropped: ConsumerOperation[] = [];
    const sink: ViewSink<string> = {
      replace: (views) => calls.push(`replace ${views.join(',')}`),
      upsert: (view) => calls.push(`upsert ${view}`),
      remove: (view) => calls.push(`remove ${view}`),
    };
    const consumer = createProjectingConsumer({
      project: (obj) => (isNamed(obj) ? obj.name : undefined),
      sink,
      onMalformed: (operation) => dropped.push(operation),
    });
    consumer.replace([{ name: 'a' }, 42, { name: 'b' }], '100');
    consumer.upsert({ name: 'c' });
    consumer.upsert(null);
    consumer.remove({ name: 'a' });
    consumer.remove('garbage');
    expect(calls).toEqual(['replace a,b', 'upsert c', 'remove a']);
    expect(dropped).toEqual(['replace', 'upsert', 'remove']);
  });
});
