/**
 * Completes the image's SBOM (scripts/image.sh): CycloneDX's npm tool (`cyclonedx-npm --omit dev`)
 * lists the npm packages of /app, and this adds what the image takes from elsewhere: each Debian
 * package whose files it holds, from the image's own /var/lib/dpkg/status.d entries, and the Node.js
 * binary. Reads and writes CycloneDX JSON.
 *
 * Usage: node scripts/sbom.ts <cyclonedx-npm.json> <rootfs> <node version> <debian arch> <out.json>
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface Component {
  type: string;
  name: string;
  version: string;
  purl: string;
  'bom-ref': string;
  publisher?: string;
  description?: string;
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
  const [npmBom, rootfs, nodeVersion, arch, out] = argv;
  if (
    out === undefined ||
    rootfs === undefined ||
    nodeVersion === undefined ||
    arch === undefined
  ) {
    throw new Error(
      'usage: sbom.ts <cyclonedx-npm.json> <rootfs> <node version> <arch> <out.json>',
    );
  }
  const bom = JSON.parse(readFileSync(npmBom ?? '', 'utf8')) as { components?: Component[] };
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
  bom.components = [...(bom.components ?? []), node, ...debianComponents(rootfs)];
  writeFileSync(out, `${JSON.stringify(bom, null, 2)}\n`);
}

main(process.argv.slice(2));
