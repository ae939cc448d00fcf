import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MachOError, readMachO, verifyCodeSignature } from './macho.ts';

const PAGE = 4096;

/**
 * A small arm64 Mach-O: header, __TEXT and __LINKEDIT segments, LC_CODE_SIGNATURE, `pages` pages of
 * code, then an ad-hoc signature (a CodeDirectory of SHA-256 page hashes and a requirements blob)
 * at the end of __LINKEDIT, laid out as Apple's signers write it.
 */
function signedMachO(pages: number): Buffer {
  const codeLimit = pages * PAGE;
  const requirements = Buffer.from([0xfa, 0xde, 0x0c, 0x01, 0, 0, 0, 12, 0, 0, 0, 0]);
  const identifier = Buffer.from('kubectl-kreload\0', 'latin1');
  const specialSlots = 2;
  const hashOffset = 88 + identifier.length + specialSlots * 32;
  const cd = Buffer.alloc(hashOffset + pages * 32);
  cd.writeUInt32BE(0xfade0c02, 0);
  cd.writeUInt32BE(cd.length, 4);
  cd.writeUInt32BE(0x20400, 8);
  cd.writeUInt32BE(0x2, 12); // adhoc
  cd.writeUInt32BE(hashOffset, 16);
  cd.writeUInt32BE(88, 20);
  cd.writeUInt32BE(specialSlots, 24);
  cd.writeUInt32BE(pages, 28);
  cd.writeUInt32BE(codeLimit, 32);
  cd.writeUInt8(32, 36);
  cd.writeUInt8(2, 37);
  cd.writeUInt8(12, 39);
  identifier.copy(cd, 88);
  const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest();
  sha256(requirements).copy(cd, hashOffset - 2 * 32); // slot -2; slot -1 (Info.plist) stays zero

  const file = Buffer.alloc(codeLimit);
  file.writeUInt32LE(0xfeedfacf, 0);
  file.writeUInt32LE(0x0100000c, 4);
  file.writeUInt32LE(2, 12); // MH_EXECUTE
  file.writeUInt32LE(3, 16);
  file.writeUInt32LE(72 * 2 + 16, 20);
  const signatureSize = 12 + 2 * 8 + cd.length + requirements.length;
  const segment = (at: number, name: string, offset: number, size: number) => {
    file.writeUInt32LE(0x19, at);
    file.writeUInt32LE(72, at + 4);
    file.write(name, at + 8, 'latin1');
    file.writeBigUInt64LE(BigInt(offset), at + 40);
    file.writeBigUInt64LE(BigInt(size), at + 48);
  };
  segment(32, '__TEXT', 0, PAGE);
  segment(104, '__LINKEDIT', PAGE, codeLimit - PAGE + signatureSize);
  file.writeUInt32LE(0x1d, 176);
  file.writeUInt32LE(16, 180);
  file.writeUInt32LE(codeLimit, 184);
  file.writeUInt32LE(signatureSize, 188);
  for (let at = 192; at < codeLimit; at += 1) file[at] = at % 251;
  for (let page = 0; page < pages; page += 1) {
    sha256(file.subarray(page * PAGE, (page + 1) * PAGE)).copy(cd, hashOffset + page * 32);
  }
  const superBlob = Buffer.alloc(28);
  superBlob.writeUInt32BE(0xfade0cc0, 0);
  superBlob.writeUInt32BE(signatureSize, 4);
  superBlob.writeUInt32BE(2, 8);
  superBlob.writeUInt32BE(0, 12);
  superBlob.writeUInt32BE(28, 16);
  superBlob.writeUInt32BE(2, 20);
  superBlob.writeUInt32BE(28 + cd.length, 24);
  return Buffer.concat([file, superBlob, cd, requirements]);
}

/** Writes page 0's hash again after a change to the load commands, as a signer would. */
function rehashFirstPage(file: Buffer): void {
  const signatureAt = file.readUInt32LE(184);
  const hashOffset = file.readUInt32BE(signatureAt + 28 + 16);
  createHash('sha256')
    .update(file.subarray(0, PAGE))
    .digest()
    .copy(file, signatureAt + 28 + hashOffset);
}

describe('verifyCodeSignature', () => {
  const pages = 3;
  const signatureAt = pages * PAGE;
  const cases: readonly {
    name: string;
    change: (file: Buffer) => void;
    problems: readonly RegExp[];
  }[] = [
    { name: 'an untouched file', change: () => undefined, problems: [] },
    {
      name: 'a byte changed in the second page',
      change: (file) => {
        file[PAGE + 10] = (file[PAGE + 10] ?? 0) ^ 1;
      },
      problems: [/^page 1 \(at 4096\) does not match$/],
    },
    {
      name: 'a byte changed in the last byte before the signature',
      change: (file) => {
        file[signatureAt - 1] = (file[signatureAt - 1] ?? 0) ^ 0x80;
      },
      problems: [/^page 2 /],
    },
    {
      name: 'the requirements blob changed',
      change: (file) => {
        file[file.length - 1] = 1;
      },
      problems: [/^special slot -2 does not match its blob$/],
    },
    {
      name: 'a hash in slot -1 where there is no Info.plist',
      change: (file) => {
        const hashOffset = file.readUInt32BE(signatureAt + 28 + 16);
        file[signatureAt + 28 + hashOffset - 32] = 7;
      },
      problems: [/^special slot -1 /],
    },
    {
      name: 'a code limit short of the signature',
      change: (file) => {
        file.writeUInt32BE(signatureAt - PAGE, signatureAt + 28 + 32);
      },
      problems: [
        /^the signature covers 8192 bytes, not the 12288 before it$/,
        /^3 code slots for 8192 bytes$/,
        /^page 2 /,
      ],
    },
    {
      name: '__LINKEDIT that ends before the signature does',
      change: (file) => {
        file.writeBigUInt64LE(BigInt(signatureAt - PAGE), 104 + 48);
        rehashFirstPage(file);
      },
      problems: [/^the signature is not inside __LINKEDIT$/],
    },
  ];

  it.each(cases)('$name', ({ change, problems }) => {
    const file = signedMachO(pages);
    change(file);
    const signature = verifyCodeSignature(file);
    expect(signature.problems).toHaveLength(problems.length);
    problems.forEach((problem, index) => {
      expect(signature.problems[index]).toMatch(problem);
    });
    expect(signature).toMatchObject({
      identifier: 'kubectl-kreload',
      adhoc: true,
      hashAlgorithm: 'sha256',
      pageSize: PAGE,
      codeSlots: pages,
    });
  });

  it('reads the architecture and segments', () => {
    const file = readMachO(signedMachO(1));
    expect(file.cpu).toBe('arm64');
    expect(file.segments.map((segment) => segment.name)).toEqual(['__TEXT', '__LINKEDIT']);
    expect(file.codeSignature?.offset).toBe(PAGE);
  });

  it.each([
    ['an ELF file', Buffer.from('\x7fELF\x02\x01\x01'.padEnd(64, '\0'), 'latin1'), /not a thin/],
    [
      'an unsigned Mach-O',
      (() => {
        const file = signedMachO(1);
        file.writeUInt32LE(2, 16); // two load commands: LC_CODE_SIGNATURE is not read
        return file;
      })(),
      /not signed/,
    ],
    [
      'a signature past the end of the file',
      signedMachO(1).subarray(0, PAGE + 40),
      /past the end of the file/,
    ],
  ])('refuses %s', (_name, file, message) => {
    expect(() => verifyCodeSignature(file)).toThrow(MachOError);
    expect(() => verifyCodeSignature(file)).toThrow(message);
  });
});
