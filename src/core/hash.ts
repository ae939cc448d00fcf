/**
 * Source hashes (§4.1). Byte-identical to Reloader: entries `key=value`, sorted byte-wise, joined by `;`,
 * SHA-1 as 40 lowercase hex characters.
 *
 * Values are fed to the hash as they came (UTF-8 text, or wire base64 that the hash decodes natively),
 * never copied into a Buffer first: at 20 000 sources of 10 KiB, the copies were 400 MB of short-lived
 * native allocations during the initial list, and a Secret's decoded bytes never exist as a JS object.
 */
import { createHash, hash as oneShotHash, type Hash } from 'node:crypto';

const SEPARATOR = Buffer.from(';');
const KEY_END = '=';

/** SHA-1 of raw bytes, or of a string's UTF-8 encoding. */
export function sha1Hex(bytes: Uint8Array | string): string {
  return createHash('sha1').update(bytes).digest('hex');
}

/** One `key=value` entry; `encoding` is how `value` turns into the hashed bytes. */
interface HashEntry {
  readonly key: string;
  readonly value: string;
  readonly encoding: 'utf8' | 'base64';
}

/** An entry with its `key=` bytes, the sort key when no key holds `=`. */
interface PrefixedEntry extends HashEntry {
  readonly prefix: Buffer;
}

/**
 * Sorted by their `key=` bytes, entries are sorted by their whole `key=value` bytes as long as no key
 * holds `=` and no key repeats: then two entries differ before either value starts. Otherwise (the API
 * server refuses such data keys; an SPC status may repeat an id) the values decide: the copying path.
 */
function hashEntries(entries: readonly HashEntry[]): string {
  const small = hashSmallText(entries);
  if (small !== undefined) return small;
  if (entries.some((entry) => entry.key.includes(KEY_END))) return hashCopies(entries);
  const prefixed: PrefixedEntry[] = entries.map((entry) => ({
    ...entry,
    prefix: Buffer.from(entry.key + KEY_END, 'utf8'),
  }));
  // The JS default sort compares UTF-16 code units, which orders astral characters wrongly (vector 11).
  prefixed.sort((a, b) => Buffer.compare(a.prefix, b.prefix));
  const repeated = prefixed.some(
    (entry, index) => index > 0 && prefixed[index - 1]?.prefix.equals(entry.prefix) === true,
  );
  if (repeated) return hashCopies(entries);
  const hash = createHash('sha1');
  prefixed.forEach((entry, index) => {
    if (index > 0) hash.update(SEPARATOR);
    hash.update(entry.prefix);
    feedValue(hash, entry);
  });
  return hash.digest('hex');
}

/** Up to this many UTF-16 units of `key=value;` text, a source is hashed from one string. */
const SMALL_TEXT_UNITS = 4096;
/** Printable ASCII without `=`: every ConfigMap key the API server accepts (`[-._a-zA-Z0-9]+`). */
const ASCII_KEY = /^[ -<>-~]*$/;

/**
 * The common source, a ConfigMap of a few short entries, as one `key=value;…` string hashed at
 * once (one call into the hash instead of three per entry, and no Buffer per key). Only text
 * entries with printable ASCII keys without `=`: their `key=` strings sort as their bytes do, and
 * the joined string encodes to the bytes of the entries one by one (no value's surrogate can meet
 * another's across the ASCII around it). Undefined otherwise, or when the text is larger, so a
 * large source is never copied whole.
 */
function hashSmallText(entries: readonly HashEntry[]): string | undefined {
  let units = 0;
  for (const entry of entries) {
    if (entry.encoding !== 'utf8' || !ASCII_KEY.test(entry.key)) return undefined;
    units += entry.key.length + entry.value.length + 2;
    if (units > SMALL_TEXT_UNITS) return undefined;
  }
  const sorted = entries
    .map((entry) => ({ prefix: entry.key + KEY_END, value: entry.value }))
    .sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
  let text = '';
  for (const [index, entry] of sorted.entries()) {
    // A repeated key is ordered by its values: the copying path.
    if (index > 0 && sorted[index - 1]?.prefix === entry.prefix) return undefined;
    text += index === 0 ? entry.prefix + entry.value : `;${entry.prefix}${entry.value}`;
  }
  return oneShotHash('sha1', text, 'hex');
}

function feedValue(hash: Hash, entry: HashEntry): void {
  hash.update(entry.value, entry.encoding);
}

/** Each entry as one Buffer of `key=value`, zeroed once hashed so no copy of a secret outlives it. */
function hashCopies(entries: readonly HashEntry[]): string {
  const copies = entries.map((entry) =>
    Buffer.concat([
      Buffer.from(entry.key + KEY_END, 'utf8'),
      Buffer.from(entry.value, entry.encoding),
    ]),
  );
  try {
    copies.sort((a, b) => Buffer.compare(a, b));
    const hash = createHash('sha1');
    copies.forEach((bytes, index) => {
      if (index > 0) hash.update(SEPARATOR);
      hash.update(bytes);
    });
    return hash.digest('hex');
  } finally {
    for (const bytes of copies) bytes.fill(0);
  }
}

function textEntries(values: Readonly<Record<string, string>> | undefined): HashEntry[] {
  return Object.entries(values ?? {}).map(([key, value]) => ({ key, value, encoding: 'utf8' }));
}

/**
 * @param binaryData wire base64 values; each is decoded and re-encoded to canonical padded base64 so that
 *   an unusual but valid wire form hashes like Reloader's `base64.StdEncoding.EncodeToString(bytes)`.
 */
export function hashConfigMap(
  data: Readonly<Record<string, string>> | undefined,
  binaryData: Readonly<Record<string, string>> | undefined,
): string {
  const entries = textEntries(data);
  for (const [key, wire] of Object.entries(binaryData ?? {})) {
    entries.push({ key, value: Buffer.from(wire, 'base64').toString('base64'), encoding: 'utf8' });
  }
  return hashEntries(entries);
}

/**
 * @param data wire base64 values. The decoded bytes are arbitrary binary: the hash decodes them itself
 *   (the same decoder as `Buffer.from(wire, 'base64')`), so they never become a JS value.
 */
export function hashSecret(data: Readonly<Record<string, string>> | undefined): string {
  return hashEntries(
    Object.entries(data ?? {}).map(([key, wire]) => ({ key, value: wire, encoding: 'base64' })),
  );
}

export interface SecretProviderClassObject {
  readonly id: string;
  readonly version: string;
}

/** Hash of one SecretProviderClassPodStatus: its objects' `id=version` plus the class name (§4.1). */
export function hashSecretProviderClassPodStatus(
  className: string,
  objects: readonly SecretProviderClassObject[],
): string {
  const entries: HashEntry[] = objects.map((object) => ({
    key: object.id,
    value: object.version,
    encoding: 'utf8',
  }));
  entries.push({ key: 'SecretProviderClassName', value: className, encoding: 'utf8' });
  return hashEntries(entries);
}
