/**
 * Source hashes (§4.1). Byte-identical to Reloader: entries `key=value`, sorted byte-wise, joined by `;`,
 * SHA-1 as 40 lowercase hex characters.
 */
import { createHash } from 'node:crypto';

const SEPARATOR = Buffer.from(';');

/** SHA-1 of raw bytes, or of a string's UTF-8 encoding. */
export function sha1Hex(bytes: Uint8Array | string): string {
  return createHash('sha1').update(bytes).digest('hex');
}

function entry(key: string, value: Uint8Array | string): Buffer {
  const valueBytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([Buffer.from(`${key}=`, 'utf8'), valueBytes]);
}

/** The JS default sort compares UTF-16 code units, which orders astral characters wrongly (vector 11). */
function hashEntries(entries: Buffer[]): string {
  entries.sort((a, b) => Buffer.compare(a, b));
  const hash = createHash('sha1');
  entries.forEach((bytes, index) => {
    if (index > 0) hash.update(SEPARATOR);
    hash.update(bytes);
  });
  return hash.digest('hex');
}

/** Kubernetes sends `binaryData` and Secret `data` as standard base64. */
function decodeBase64(wire: string): Buffer {
  return Buffer.from(wire, 'base64');
}

/**
 * @param binaryData wire base64 values; each is decoded and re-encoded to canonical padded base64 so that
 *   an unusual but valid wire form hashes like Reloader's `base64.StdEncoding.EncodeToString(bytes)`.
 */
export function hashConfigMap(
  data: Readonly<Record<string, string>> | undefined,
  binaryData: Readonly<Record<string, string>> | undefined,
): string {
  const entries = Object.entries(data ?? {}).map(([key, value]) => entry(key, value));
  for (const [key, wire] of Object.entries(binaryData ?? {})) {
    entries.push(entry(key, decodeBase64(wire).toString('base64')));
  }
  return hashEntries(entries);
}

/**
 * @param data wire base64 values. The decoded bytes are arbitrary binary: they stay in Buffers (never a JS
 *   string) and are zeroed once hashed so no copy of a secret outlives this call.
 */
export function hashSecret(data: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(data ?? {}).map(([key, wire]) => {
    const value = decodeBase64(wire);
    const bytes = entry(key, value);
    value.fill(0);
    return bytes;
  });
  try {
    return hashEntries(entries);
  } finally {
    for (const bytes of entries) bytes.fill(0);
  }
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
  const entries = objects.map((object) => entry(object.id, object.version));
  entries.push(entry('SecretProviderClassName', className));
  return hashEntries(entries);
}
