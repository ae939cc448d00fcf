import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../core/json.ts';
import type { WatchEvent } from './response-decoding.ts';
import {
  ListBodyDecoder,
  MalformedResponseError,
  WatchStreamDecoder,
} from './response-decoding.ts';

const MARKER = 'MARKER-7f3a9c';

/** Feeds `text` in chunks of `size` bytes (multi-byte characters get split too). */
function decodeList(
  text: string,
  size = Number.MAX_SAFE_INTEGER,
  maxObjectBytes?: number,
): { items: JsonObject[]; metadata: JsonObject | undefined } {
  const items: JsonObject[] = [];
  const decoder = new ListBodyDecoder({
    status: 200,
    onItem: (item) => items.push(item),
    maxObjectBytes,
  });
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += size) decoder.push(bytes.subarray(at, at + size));
  return { items, metadata: decoder.end().metadata };
}

function decodeWatch(text: string, size = Number.MAX_SAFE_INTEGER): WatchEvent[] {
  const events: WatchEvent[] = [];
  const decoder = new WatchStreamDecoder({ status: 200, onEvent: (event) => events.push(event) });
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += size) decoder.push(bytes.subarray(at, at + size));
  return events;
}

function thrown(run: () => unknown): MalformedResponseError {
  try {
    run();
  } catch (error) {
    if (error instanceof MalformedResponseError) return error;
    throw error;
  }
  throw new Error('expected a MalformedResponseError');
}

const tricky = {
  metadata: { name: 'a', namespace: 'ns', uid: 'u', annotations: { x: '{"y":["]}"]}' } },
  data: {
    quotes: 'say "hi" \\ back\\\\slash \\"',
    braces: '}{][,:',
    unicode: 'żółw 🐢 \u0000 \u2028',
    newline: 'line1\nline2',
  },
  binaryData: { b: 'AAEC' },
  nested: [[1, 2, { z: [true, false, null, -1.5e3] }]],
};

describe('ListBodyDecoder', () => {
  const list = {
    kind: 'ConfigMapList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '42', continue: 'tok' },
    items: [tricky, { metadata: { name: 'b' } }, {}],
  };
  const text = JSON.stringify(list, null, 1);

  it.each([1, 2, 3, 7, 64, 4096, Number.MAX_SAFE_INTEGER])(
    'yields every item exactly as JSON.parse would, in chunks of %i bytes',
    (size) => {
      const { items, metadata } = decodeList(text, size);
      expect(items).toEqual(list.items);
      expect(metadata).toEqual(list.metadata);
    },
  );

  it('accepts metadata after the items, an empty list and compact JSON', () => {
    expect(decodeList('{"items":[],"metadata":{"resourceVersion":"1"}}')).toEqual({
      items: [],
      metadata: { resourceVersion: '1' },
    });
    expect(decodeList(JSON.stringify({ items: [tricky] })).items).toEqual([tricky]);
  });

  it('hands each item over as soon as it is complete', () => {
    const seen: string[] = [];
    const decoder = new ListBodyDecoder({
      status: 200,
      onItem: (item) => seen.push(JSON.stringify(item)),
    });
    decoder.push(Buffer.from('{"metadata":{},"items":[{"a":1},{"b":'));
    expect(seen).toEqual(['{"a":1}']);
    decoder.push(Buffer.from('2}]}'));
    expect(seen).toEqual(['{"a":1}', '{"b":2}']);
    decoder.end();
  });

  it.each([
    ['a 200 answer without items', '{"kind":"ConfigMapList","metadata":{}}', 'without "items"'],
    ['items that are null', '{"items":null}', '"items" is not an array'],
    ['items twice', '{"items":[],"items":[]}', '"items" twice'],
    ['an item that is not an object', '{"items":[1]}', 'not an object'],
    ['a truncated answer', '{"items":[{"a":1}', 'ended early'],
    ['trailing data', '{"items":[]} x', 'after the end'],
    ['a missing comma', '{"items":[{} {}]}', 'expected "," or "]"'],
    ['not an object at all', '<html>', 'expected an object'],
    ['an empty body', '', 'ended early'],
  ])('%s is an error, never an empty list', (_name, body, description) => {
    const error = thrown(() => decodeList(body));
    expect(error.message).toContain(description);
    expect(error).toMatchObject({ status: 200, reason: 'MalformedResponse' });
  });

  it('never quotes the body in its error', () => {
    const body = `{"items":[{"data":{"k":"${MARKER}"}, broken ${MARKER}}]}`;
    const error = thrown(() => decodeList(body));
    expect(error.message).toMatch(
      /^malformed 200 response: a value that is not valid JSON at byte 10$/,
    );
    expect(JSON.stringify(error)).not.toContain(MARKER);
    expect(String(error.cause)).not.toContain(MARKER);
    expect(error.stack).not.toContain(MARKER);
  });

  it('bounds one object, not the whole answer', () => {
    const item = JSON.stringify({ data: { k: 'x'.repeat(1000) } });
    const body = `{"items":[${Array.from({ length: 50 }, () => item).join(',')}]}`;
    expect(decodeList(body, 100, 2000).items).toHaveLength(50);
    expect(
      thrown(() => decodeList(`{"items":[{"data":"${'x'.repeat(3000)}"}]}`, 100, 2000)).message,
    ).toContain('larger than 2000 bytes');
  });
});

describe('WatchStreamDecoder', () => {
  const events = [
    { type: 'ADDED', object: tricky },
    { type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } },
  ];
  const text = events.map((event) => `${JSON.stringify(event)}\n`).join('');

  it.each([1, 5, 4096])('yields one event per line, in chunks of %i bytes', (size) => {
    expect(decodeWatch(text, size)).toEqual(events);
  });

  it.each([
    ['a line that is not JSON', `{"type":"ADDED","object":{"data":"${MARKER}"\n`, 'not valid JSON'],
    ['a line without an object', '{"type":"ADDED","object":"x"}\n', 'without "type" and "object"'],
    ['a line without a type', '{"object":{}}\n', 'without "type" and "object"'],
  ])('%s is an error that names its offset, not its text', (_name, line, description) => {
    const error = thrown(() => decodeWatch(`${JSON.stringify(events[1])}\n${line}`));
    expect(error.message).toContain(description);
    expect(error.offset).toBe(JSON.stringify(events[1]).length + 1);
    expect(error.message).not.toContain(MARKER);
  });

  it('stops at the bad line: the events after it are never delivered', () => {
    const seen: string[] = [];
    const decoder = new WatchStreamDecoder({ status: 200, onEvent: (e) => seen.push(e.type) });
    expect(() => {
      decoder.push(Buffer.from('garbage\n{"type":"MODIFIED","object":{}}\n'));
    }).toThrow(MalformedResponseError);
    expect(seen).toEqual([]);
  });

  it('bounds a line', () => {
    const decoder = new WatchStreamDecoder({
      status: 200,
      onEvent: () => undefined,
      maxObjectBytes: 10,
    });
    expect(() => {
      decoder.push(Buffer.alloc(2000, 0x61));
    }).toThrow(/a line longer than 1034 bytes at byte 0/);
  });
});
