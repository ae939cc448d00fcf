/**
 * Hashes of the ConfigMaps and Secrets in a manifest, as kreload would compute them for the objects the
 * API server stores (§4.1). Pure: takes the parsed YAML documents.
 *
 * A Secret written with `stringData` is stored by the API server with those entries base64-encoded into
 * `data`, overriding `data` entries of the same key; the hash here follows the stored object, so it is
 * what kreload will see once the manifest is applied.
 */
import { hashConfigMap, hashSecret } from '../core/hash.ts';

export interface ManifestHash {
  readonly kind: 'ConfigMap' | 'Secret';
  /** `default` when the manifest names none (what kubectl uses without a context namespace). */
  readonly namespace: string;
  readonly name: string;
  readonly hash: string;
}

export interface ManifestHashes {
  readonly hashes: readonly ManifestHash[];
  readonly problems: readonly string[];
}

type StringMap = Readonly<Record<string, string>>;

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Standard padded base64, as the API server requires for Secret `data` and ConfigMap `binaryData`. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

class DocumentProblem extends Error {}

function stringMap(
  object: Readonly<Record<string, unknown>>,
  field: string,
  options: { base64: boolean },
): StringMap {
  const value = object[field];
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new DocumentProblem(`${field} must be a map`);
  const entries: [string, string][] = [];
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') throw new DocumentProblem(`${field}.${key} must be a string`);
    if (options.base64 && !BASE64.test(entry)) {
      throw new DocumentProblem(`${field}.${key} is not valid base64`);
    }
    entries.push([key, entry]);
  }
  return Object.fromEntries(entries);
}

function secretData(document: Readonly<Record<string, unknown>>): StringMap {
  const data = stringMap(document, 'data', { base64: true });
  const stringData = stringMap(document, 'stringData', { base64: false });
  const encoded = Object.entries(stringData).map(([key, value]): [string, string] => [
    key,
    Buffer.from(value, 'utf8').toString('base64'),
  ]);
  return { ...data, ...Object.fromEntries(encoded) };
}

function hashDocument(
  document: Readonly<Record<string, unknown>>,
  kind: ManifestHash['kind'],
): ManifestHash {
  const metadata = isRecord(document.metadata) ? document.metadata : {};
  const name = metadata.name;
  if (typeof name !== 'string' || name === '')
    throw new DocumentProblem('metadata.name is missing');
  const namespace =
    typeof metadata.namespace === 'string' && metadata.namespace !== ''
      ? metadata.namespace
      : 'default';
  const hash =
    kind === 'ConfigMap'
      ? hashConfigMap(
          stringMap(document, 'data', { base64: false }),
          stringMap(document, 'binaryData', { base64: true }),
        )
      : hashSecret(secretData(document));
  return { kind, namespace, name, hash };
}

function sourceKind(
  document: Readonly<Record<string, unknown>>,
): ManifestHash['kind'] | 'List' | undefined {
  if (document.apiVersion !== 'v1') return undefined;
  const kind = document.kind;
  return kind === 'ConfigMap' || kind === 'Secret' || kind === 'List' ? kind : undefined;
}

/** Walks the documents (and the items of `v1` Lists); other kinds are skipped silently. */
export function hashManifestDocuments(documents: readonly unknown[]): ManifestHashes {
  const hashes: ManifestHash[] = [];
  const problems: string[] = [];
  const visit = (document: unknown, where: string): void => {
    if (!isRecord(document)) return;
    const kind = sourceKind(document);
    if (kind === 'List') {
      const items = Array.isArray(document.items) ? document.items : [];
      items.forEach((item, index) => {
        visit(item, `${where}, item ${index + 1}`);
      });
      return;
    }
    if (kind === undefined) return;
    try {
      hashes.push(hashDocument(document, kind));
    } catch (error) {
      if (!(error instanceof DocumentProblem)) throw error;
      problems.push(`${where}: ${kind}: ${error.message}`);
    }
  };
  documents.forEach((document, index) => {
    visit(document, `document ${index + 1}`);
  });
  return { hashes, problems };
}

export function formatManifestHash(entry: ManifestHash): string {
  return `${entry.kind} ${entry.namespace}/${entry.name} ${entry.hash}`;
}
