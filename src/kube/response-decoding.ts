/**
 * Incremental decoders for the two streamed answers of the API server (ADR 0022): a list page,
 * decoded one item at a time, and a watch stream, decoded one line (one event) at a time. Memory is
 * bounded by the largest single object, never by the size of a page.
 *
 * The scanner only finds where each item starts and ends (strings, escapes, nesting); every item
 * is then parsed by the native `JSON.parse`, which also rejects whatever the scanner let through.
 *
 * No error here quotes the body: a Secret list's bytes must never reach a log line or `/readyz`.
 * Errors carry the HTTP status, the byte offset and a fixed description.
 */
import { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import { isJsonObject } from '../core/json.ts';

/**
 * The largest object (one list item or one watch line) kreload decodes. etcd stores at most about
 * 1.5 MiB per object; its JSON form is larger (base64 `binaryData`, `\u` escapes), hence the margin.
 */
export const MAX_OBJECT_BYTES = 16 * 1024 * 1024;

/** An answer kreload cannot decode; `offset` is the byte where decoding stopped. */
export class MalformedResponseError extends ApiError {
  readonly offset: number;

  constructor(description: string, details: { status: number; offset: number }) {
    super(
      `malformed ${String(details.status)} response: ${description} at byte ${String(details.offset)}`,
      {
        status: details.status,
        reason: 'MalformedResponse',
        retryable: true,
      },
    );
    this.name = 'MalformedResponseError';
    this.offset = details.offset;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const NEWLINE = 0x0a;

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk)
    ? chunk
    : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * The UTF-8 text of bytes that arrived in several chunks, decoded part by part into V8 strings rather
 * than joined into one Buffer first: a 10 KiB item that spans two chunks would otherwise cost a native
 * copy that lives until the next full collection, and a list brings thousands of them.
 */
function utf8Text(parts: readonly Buffer[]): string {
  if (parts.length === 1) return parts[0]?.toString('utf8') ?? '';
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const last = parts.length - 1;
  return parts.map((part, index) => decoder.decode(part, { stream: index < last })).join('');
}

function isDelimiter(byte: number): boolean {
  return byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || isWhitespace(byte);
}

/** What a captured value is, in the list's top-level object. */
type CaptureRole = 'key' | 'member' | 'item';

/** Collects the bytes of one value across chunks and tells where it ends. */
class ValueCapture {
  readonly role: CaptureRole;
  readonly start: number;
  readonly #parts: Buffer[] = [];
  #bytes = 0;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #primitive = false;
  #started = false;
  /** Where the value ended in the chunk being scanned; -1 while it goes on. */
  #end = -1;

  constructor(role: CaptureRole, start: number) {
    this.role = role;
    this.start = start;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** @returns the index just past the value, or -1 when the chunk ends inside it. */
  scan(buf: Buffer, from: number): number {
    let i = this.#started ? from : this.#begin(buf[from] ?? 0, from);
    this.#end = -1;
    while (i < buf.length && this.#end === -1) i = this.#advance(buf, i);
    const stop = this.#end === -1 ? buf.length : this.#end;
    if (stop > from) {
      this.#parts.push(buf.subarray(from, stop));
      this.#bytes += stop - from;
    }
    return this.#end;
  }

  text(): string {
    return utf8Text(this.#parts);
  }

  /** @returns where scanning goes on: a primitive's first byte is scanned like the rest. */
  #begin(first: number, at: number): number {
    this.#started = true;
    if (first === OPEN_BRACE || first === OPEN_BRACKET) this.#depth = 1;
    else if (first === QUOTE) this.#inString = true;
    else this.#primitive = true;
    return this.#primitive ? at : at + 1;
  }

  /** Scans from `i`; sets `#end` when the value ends. @returns where to go on. */
  #advance(buf: Buffer, i: number): number {
    if (this.#inString) {
      const next = this.#skipString(buf, i);
      if (this.#isComplete()) this.#end = next;
      return next;
    }
    const byte = buf[i] ?? 0;
    if (this.#primitive) {
      if (isDelimiter(byte)) this.#end = i;
      return this.#end === -1 ? i + 1 : i;
    }
    return this.#skipStructure(buf, i);
  }

  /** A method, not an inline test: TypeScript would narrow `#inString` across #skipString. */
  #isComplete(): boolean {
    return !this.#inString && this.#depth === 0;
  }

  /**
   * Moves over bytes outside strings (a hot loop: locals, no per-byte call) to just after the next
   * quote, or to the end of the value or of `buf`.
   */
  #skipStructure(buf: Buffer, from: number): number {
    let depth = this.#depth;
    let i = from;
    for (; i < buf.length; i++) {
      const byte = buf[i];
      if (byte === QUOTE) {
        this.#inString = true;
        i++;
        break;
      }
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
      else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth === 0) {
        this.#end = i + 1;
        i++;
        break;
      }
    }
    this.#depth = depth;
    return i;
  }

  /** Moves past string content to just after the closing quote, or to the end of `buf`. */
  #skipString(buf: Buffer, from: number): number {
    let i = from;
    while (i < buf.length) {
      if (this.#escaped) {
        this.#escaped = false;
        i++;
        continue;
      }
      const quote = buf.indexOf(QUOTE, i);
      const limit = quote === -1 ? buf.length : quote;
      const backslash = buf.subarray(i, limit).indexOf(BACKSLASH);
      if (backslash !== -1) {
        this.#escaped = true;
        i += backslash + 1;
        continue;
      }
      if (quote === -1) return buf.length;
      this.#inString = false;
      return quote + 1;
    }
    return i;
  }
}

/** Where the decoder is in `{"kind":…,"metadata":{…},"items":[…]}`, outside a captured value. */
type ListState =
  | 'open'
  | 'first-key'
  | 'key'
  | 'colon'
  | 'value'
  | 'after-member'
  | 'first-item'
  | 'item'
  | 'after-item'
  | 'done';

export interface DecodedListEnvelope {
  /** The list's `metadata`, or undefined when it had none. */
  readonly metadata: JsonObject | undefined;
}

/**
 * Decodes one list answer chunk by chunk, handing each item to `onItem` as soon as its last byte
 * arrived. Members other than `items` and `metadata` are checked and dropped. A list without an
 * `items` array is an error, never an empty list.
 */
export class ListBodyDecoder {
  readonly #status: number;
  readonly #onItem: (item: JsonObject) => void;
  readonly #maxObjectBytes: number;
  #state: ListState = 'open';
  #offset = 0;
  #capture: ValueCapture | undefined;
  #key: string | undefined;
  #sawItems = false;
  #metadata: JsonObject | undefined;

  constructor(options: {
    readonly status: number;
    readonly onItem: (item: JsonObject) => void;
    readonly maxObjectBytes?: number;
  }) {
    this.#status = options.status;
    this.#onItem = options.onItem;
    this.#maxObjectBytes = options.maxObjectBytes ?? MAX_OBJECT_BYTES;
  }

  push(chunk: Uint8Array): void {
    const buf = asBuffer(chunk);
    let i = 0;
    while (i < buf.length) {
      const capture = this.#capture;
      if (capture !== undefined) {
        const end = capture.scan(buf, i);
        if (capture.bytes > this.#maxObjectBytes) {
          this.#fail(`a value larger than ${String(this.#maxObjectBytes)} bytes`, capture.start);
        }
        if (end === -1) break;
        i = end;
        this.#capture = undefined;
        this.#complete(capture);
      } else if (isWhitespace(buf[i] ?? 0)) {
        i++;
      } else {
        i = this.#structural(buf[i] ?? 0, i);
      }
    }
    this.#offset += buf.length;
  }

  /** Checks the answer is complete; @returns its envelope. */
  end(): DecodedListEnvelope {
    if (this.#state !== 'done' || this.#capture !== undefined) {
      this.#fail('the answer ended early', this.#offset);
    }
    if (!this.#sawItems) this.#fail('a list without "items"', this.#offset);
    return { metadata: this.#metadata };
  }

  /** One byte between values; @returns the index to go on from (a value scans its own first byte). */
  #structural(byte: number, index: number): number {
    const at = this.#offset + index;
    switch (this.#state) {
      case 'open':
        this.#expect(byte === OPEN_BRACE, 'expected an object', at, 'first-key');
        break;
      case 'first-key':
        this.#startKey(byte, at, { empty: CLOSE_BRACE, then: 'done' });
        break;
      case 'key':
        this.#startKey(byte, at);
        break;
      case 'colon':
        this.#expect(byte === COLON, 'expected ":"', at, 'value');
        break;
      case 'value':
        this.#startValue(byte, at);
        break;
      case 'after-member':
        this.#after(byte, at, CLOSE_BRACE, { next: 'key', closed: 'done' });
        break;
      case 'first-item':
        this.#startItem(byte, at, { empty: CLOSE_BRACKET, then: 'after-member' });
        break;
      case 'item':
        this.#startItem(byte, at);
        break;
      case 'after-item':
        this.#after(byte, at, CLOSE_BRACKET, { next: 'item', closed: 'after-member' });
        break;
      case 'done':
        this.#fail('data after the end of the answer', at);
    }
    return this.#capture === undefined ? index + 1 : index;
  }

  #expect(ok: boolean, description: string, at: number, next: ListState): void {
    if (!ok) this.#fail(description, at);
    this.#state = next;
  }

  /** After a member or an item: a comma goes on, `close` ends the object or the array. */
  #after(
    byte: number,
    at: number,
    close: number,
    to: { next: ListState; closed: ListState },
  ): void {
    if (byte === COMMA) this.#state = to.next;
    else if (byte === close) this.#state = to.closed;
    else this.#fail(`expected "," or "${String.fromCharCode(close)}"`, at);
  }

  /** `empty`: the byte that closes an empty object or array there, and the state it leads to. */
  #startKey(byte: number, at: number, empty?: { empty: number; then: ListState }): void {
    if (byte === empty?.empty) {
      this.#state = empty.then;
      return;
    }
    if (byte !== QUOTE) this.#fail('expected a member name', at);
    this.#capture = new ValueCapture('key', at);
  }

  #startItem(byte: number, at: number, empty?: { empty: number; then: ListState }): void {
    if (byte === empty?.empty) this.#state = empty.then;
    else this.#capture = new ValueCapture('item', at);
  }

  #startValue(byte: number, at: number): void {
    if (this.#key !== 'items') {
      this.#capture = new ValueCapture('member', at);
      return;
    }
    if (byte !== OPEN_BRACKET) this.#fail('"items" is not an array', at);
    if (this.#sawItems) this.#fail('"items" twice', at);
    this.#sawItems = true;
    this.#state = 'first-item';
  }

  #complete(capture: ValueCapture): void {
    const value = this.#parse(capture);
    switch (capture.role) {
      case 'key':
        this.#key = typeof value === 'string' ? value : '';
        this.#state = 'colon';
        return;
      case 'member':
        if (this.#key === 'metadata' && !isJsonObject(value)) {
          this.#fail('"metadata" is not an object', capture.start);
        }
        if (this.#key === 'metadata' && isJsonObject(value)) this.#metadata = value;
        this.#state = 'after-member';
        return;
      case 'item':
        if (!isJsonObject(value)) this.#fail('an item that is not an object', capture.start);
        this.#state = 'after-item';
        this.#onItem(value);
    }
  }

  #parse(capture: ValueCapture): unknown {
    try {
      return JSON.parse(capture.text());
    } catch {
      // The SyntaxError quotes the text it failed on: it must not travel any further.
      return this.#fail('a value that is not valid JSON', capture.start);
    }
  }

  #fail(description: string, offset: number): never {
    throw new MalformedResponseError(description, { status: this.#status, offset });
  }
}

export interface WatchEvent {
  readonly type: string;
  readonly object: JsonObject;
}

/**
 * Splits a watch stream into events, one JSON object per line. A line that is not a watch event
 * is an error: dropping it would let the next event's resourceVersion skip over a lost change.
 */
export class WatchStreamDecoder {
  readonly #status: number;
  readonly #onEvent: (event: WatchEvent) => void;
  readonly #maxLineBytes: number;
  #parts: Buffer[] = [];
  #pending = 0;
  #lineStart = 0;
  #offset = 0;

  constructor(options: {
    readonly status: number;
    readonly onEvent: (event: WatchEvent) => void;
    readonly maxObjectBytes?: number;
  }) {
    this.#status = options.status;
    this.#onEvent = options.onEvent;
    this.#maxLineBytes = (options.maxObjectBytes ?? MAX_OBJECT_BYTES) + 1024;
  }

  push(chunk: Uint8Array): void {
    const buf = asBuffer(chunk);
    let from = 0;
    for (;;) {
      const newline = buf.indexOf(NEWLINE, from);
      const stop = newline === -1 ? buf.length : newline;
      if (stop > from) {
        this.#parts.push(buf.subarray(from, stop));
        this.#pending += stop - from;
      }
      if (this.#pending > this.#maxLineBytes) {
        this.#fail(`a line longer than ${String(this.#maxLineBytes)} bytes`, this.#lineStart);
      }
      if (newline === -1) break;
      this.#line(this.#offset + newline + 1);
      from = newline + 1;
    }
    this.#offset += buf.length;
  }

  #line(nextLineStart: number): void {
    const parts = this.#parts;
    const start = this.#lineStart;
    this.#parts = [];
    this.#pending = 0;
    this.#lineStart = nextLineStart;
    const text = utf8Text(parts);
    if (text.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // The SyntaxError quotes the line: it must not travel any further.
      this.#fail('a watch line that is not valid JSON', start);
    }
    const type = isJsonObject(parsed) ? parsed.type : undefined;
    const object = isJsonObject(parsed) ? parsed.object : undefined;
    if (typeof type !== 'string' || !isJsonObject(object)) {
      this.#fail('a watch line without "type" and "object"', start);
    }
    this.#onEvent({ type, object });
  }

  #fail(description: string, offset: number): never {
    throw new MalformedResponseError(description, { status: this.#status, offset });
  }
}
