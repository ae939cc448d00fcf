import { describe, expect, it } from 'vitest';
import { runHashCommand } from './hash-command.ts';

const MANIFEST = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  namespace: team-a
data:
  key: value
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
---
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: s3cr3t
`;

function fakeIo(files: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      stdout: { write: (text: string) => out.push(text) },
      stderr: { write: (text: string) => err.push(text) },
      readFile: (path: string) => {
        const text = files[path];
        return text === undefined
          ? Promise.reject(new Error(`ENOENT: no such file or directory, open '${path}'`))
          : Promise.resolve(text);
      },
    },
  };
}

describe('kreload hash', () => {
  it('prints one line per ConfigMap and Secret', async () => {
    const { io, out, err } = fakeIo({ 'm.yaml': MANIFEST });
    expect(await runHashCommand(['-f', 'm.yaml'], io)).toBe(0);
    expect(out.join('')).toBe(
      'ConfigMap team-a/app-config dc30e0faa89a70dec1033016a2309bbeb9efcbd0\n' +
        'Secret default/db d93dd00779cd04e2ec1db21fa3d0e20deea13f9c\n',
    );
    expect(err).toEqual([]);
  });

  it('takes several files, --filename and stdin', async () => {
    const { io, out } = fakeIo({
      '-': MANIFEST,
      'b.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n',
    });
    expect(await runHashCommand(['--filename', '-', '-f=b.yaml'], io)).toBe(0);
    expect(out).toHaveLength(3);
  });

  it.each<[string[], string[]]>([
    [[], ['kreload hash: -f <manifest.yaml> is required\n']],
    [
      ['m.yaml'],
      [
        'kreload hash: unexpected argument "m.yaml"\n',
        'kreload hash: -f <manifest.yaml> is required\n',
      ],
    ],
    [['-f'], ['kreload hash: -f <manifest.yaml> is required\n']],
  ])('%j is a usage error (exit 2)', async (argv, messages) => {
    const { io, err } = fakeIo({});
    expect(await runHashCommand(argv, io)).toBe(2);
    expect(err).toEqual([...messages, 'Usage: kreload hash -f <manifest.yaml> [-f <more.yaml>]\n']);
  });

  it('exits 1 on an unreadable file or invalid YAML, still hashing the other files', async () => {
    const { io, out, err } = fakeIo({ 'bad.yaml': 'a: [', 'm.yaml': MANIFEST });
    expect(await runHashCommand(['-f', 'missing.yaml', '-f', 'bad.yaml', '-f', 'm.yaml'], io)).toBe(
      1,
    );
    expect(out).toHaveLength(2);
    expect(err[0]).toBe(
      "kreload hash: missing.yaml: ENOENT: no such file or directory, open 'missing.yaml'\n",
    );
    expect(err[1]).toMatch(/^kreload hash: bad\.yaml: /);
  });

  it('prints its help', async () => {
    const { io, out } = fakeIo({});
    expect(await runHashCommand(['--help'], io)).toBe(0);
    expect(out.join('')).toContain('--filename');
  });

  it.each([
    [
      'a bad indentation',
      'apiVersion: v1\nkind: Secret\ndata:\n  password: c2VjcmV0LW1hcmtlcg==\n    x: 1\n',
    ],
    [
      'an unknown tag',
      'apiVersion: v1\nkind: Secret\ndata:\n  password: !<c2VjcmV0LW1hcmtlcg==> x\n',
    ],
    [
      'an unclosed quote',
      'apiVersion: v1\nkind: Secret\nstringData:\n  password: "c2VjcmV0LW1hcmtlcg==\n',
    ],
  ])('a YAML error (%s) names the position, never a line of the Secret', async (_name, yaml) => {
    const { io, out, err } = fakeIo({ 's.yaml': yaml });
    expect(await runHashCommand(['-f', 's.yaml'], io)).toBe(1);
    expect(out).toEqual([]);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(
      /^kreload hash: s\.yaml: not valid YAML at line \d+, column \d+(: [a-z ,-]+)?\n$/i,
    );
    expect(err.join('')).not.toContain('c2VjcmV0LW1hcmtlcg');
    expect(err.join('')).not.toContain('password');
  });
});
