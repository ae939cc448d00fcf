/**
 * Completes the image's SBOM (scripts/image.sh). The image ships no node_modules: npm packages reach
 * it as code bundled into /app/dist. CycloneDX's npm tool (`cyclonedx-npm --omit dev`) lists the
 * production dependency tree; this keeps the packages the bundle's source maps name (what tree-shaking
 * left in), marks them as bundled, and adds what the image takes from elsewhere: each Debian package
 * whose files it holds, from the image's own /var/lib/dpkg/status.d entries, and the Node.js binary.
 * Reads and writes CycloneDX JSON.
 *
 * Usage: node scripts/sbom.ts <cyclonedx-npm.json> <source-map dir> <rootfs> <node version>
 *          <debian arch> <out.json>
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface Property {
  name: string;
  value: string;
}

export interface Component {
  type: string;
  name: string;
  version: string;
  purl: string;
  'bom-ref': string;
  publisher?: string;
  description?: string;
  properties?: Property[];
  components?: Component[];
}

interface Dependency {
  ref: string;
  dependsOn?: string[];
}

/** cyclonedx-npm's record of where a package is installed, e.g. `node_modules/@scope/name`. */
const PACKAGE_PATH = 'cdx:npm:package:path';
export const BUNDLED_PROPERTY: Property = {
  name: 'kreload:shipped-as',
  value: 'bundled in /app/dist',
};

/**
 * The install path of each package a source map's sources come from: `../node_modules/a/lib/x.js`
 * gives `node_modules/a`, `../node_modules/a/node_modules/@s/b/x.js` gives
 * `node_modules/a/node_modules/@s/b`.
 */
export function bundledPackagePaths(sources: readonly string[]): Set<string> {
  const paths = new Set<string>();
  for (const source of sources) {
    const segments = source.split('/');
    const first = segments.indexOf('node_modules');
    if (first < 0) continue;
    const kept: string[] = [];
    for (let i = first; i < segments.length;) {
      if (segments[i] !== 'node_modules') break;
      const scoped = segments[i + 1]?.startsWith('@') === true;
      const width = scoped ? 3 : 2;
      if (i + width >= segments.length) break;
      kept.push(...segments.slice(i, i + width));
      i += width;
    }
    if (kept.length > 0) paths.add(kept.join('/'));
  }
  return paths;
}

function sourceMapSources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.js.map'))
    .flatMap((file) => {
      const map = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { sources?: string[] };
      return map.sources ?? [];
    });
}

/**
 * The npm components whose package the bundle holds code of, flattened (the image has no
 * node_modules tree to nest them in) and marked as bundled; the rest are not in the image.
 */
export function bundledComponents(
  components: readonly Component[],
  bundled: ReadonlySet<string>,
): Component[] {
  return components.flatMap((component): Component[] => {
    const { components: nested = [], ...own } = component;
    const installedAt = own.properties?.find((property) => property.name === PACKAGE_PATH)?.value;
    const kept =
      installedAt !== undefined && bundled.has(installedAt)
        ? [{ ...own, properties: [...(own.properties ?? []), BUNDLED_PROPERTY] }]
        : [];
    return [...kept, ...bundledComponents(nested, bundled)];
  });
}

/** The dependency graph restricted to the components kept. */
export function keptDependencies(
  dependencies: readonly Dependency[],
  kept: ReadonlySet<string>,
): Dependency[] {
  return dependencies
    .filter((dependency) => kept.has(dependency.ref))
    .map((dependency) => ({
      ...dependency,
      ...(dependency.dependsOn && {
        dependsOn: dependency.dependsOn.filter((ref) => kept.has(ref)),
      }),
    }));
}

/** The fields of one Debian control paragraph (continuation lines dropped). */
function controlFields(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z][\w-]*):\s*(.*)$/.exec(line);
    if (match?.[1] !== undefined) fields.set(match[1], match[2] ?? '');
  }
  return fields;
}

function debianComponents(rootfs: string): Component[] {
  const dir = path.join(rootfs, 'var', 'lib', 'dpkg', 'status.d');
  return readdirSync(dir)
    .filter((file) => !file.includes('.'))
    .sort()
    .map((file) => {
      const fields = controlFields(readFileSync(path.join(dir, file), 'utf8'));
      const name = fields.get('Package') ?? file;
      const version = fields.get('Version') ?? '';
      const arch = fields.get('Architecture') ?? '';
      const purl = `pkg:deb/debian/${name}@${encodeURIComponent(version)}?arch=${arch}&distro=debian-12`;
      return {
        type: 'library',
        name,
        version,
        purl,
        'bom-ref': purl,
        publisher: fields.get('Maintainer') ?? '',
        description: fields.get('Description') ?? '',
      };
    });
}

function main(argv: readonly string[]): void {
  const [npmBom, sourceMaps, rootfs, nodeVersion, arch, out] = argv;
  if (
    npmBom === undefined ||
    sourceMaps === undefined ||
    rootfs === undefined ||
    nodeVersion === undefined ||
    arch === undefined ||
    out === undefined
  ) {
    throw new Error(
      'usage: sbom.ts <cyclonedx-npm.json> <source-map dir> <rootfs> <node version> <arch> <out.json>',
    );
  }
  const bom = JSON.parse(readFileSync(npmBom, 'utf8')) as {
    metadata?: { component?: { 'bom-ref'?: string } };
    components?: Component[];
    dependencies?: Dependency[];
  };
  const bundled = bundledPackagePaths(sourceMapSources(sourceMaps));
  if (bundled.size === 0) throw new Error(`no npm package in the source maps of ${sourceMaps}`);
  const npm = bundledComponents(bom.components ?? [], bundled);
  const nodePurl = `pkg:generic/node@${nodeVersion}?arch=${arch}&download_url=https://nodejs.org/dist/v${nodeVersion}/`;
  const node: Component = {
    type: 'application',
    name: 'node',
    version: nodeVersion,
    purl: nodePurl,
    'bom-ref': nodePurl,
    publisher: 'OpenJS Foundation',
    description: 'Node.js runtime, /usr/local/bin/node',
  };
  bom.components = [...npm, node, ...debianComponents(rootfs)];
  const kept = new Set([
    ...npm.map((component) => component['bom-ref']),
    ...(bom.metadata?.component?.['bom-ref'] === undefined
      ? []
      : [bom.metadata.component['bom-ref']]),
  ]);
  bom.dependencies = keptDependencies(bom.dependencies ?? [], kept);
  writeFileSync(out, `${JSON.stringify(bom, null, 2)}\n`);
}

if (import.meta.main) main(process.argv.slice(2));
