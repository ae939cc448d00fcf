/**
 * Reads a thin 64-bit Mach-O executable and checks its embedded code signature the way macOS does
 * before it runs a page: every page up to the signature hashes to the CodeDirectory's slot for it,
 * and every blob the signature carries (requirements, entitlements) hashes to its special slot. The
 * plugin's darwin executables are built and signed here, where no macOS `codesign --verify` runs;
 * this is the independent check of what the signer (scripts/quill.sh) wrote. Layouts: Apple's
 * <mach-o/loader.h> (little-endian) and the code signing blobs of <Security/CSCommonPriv.h>
 * (big-endian).
 */
import { createHash } from 'node:crypto';

/** A file that is not a Mach-O this reads, or a signature it cannot parse. */
export class MachOError extends Error {
  override readonly name = 'MachOError';
}

const MH_MAGIC_64 = 0xfeedfacf;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;

/** mach_header_64.cputype of the architectures the plugin ships. */
const CPU_TYPES: Readonly<Record<number, string>> = {
  0x01000007: 'x86_64',
  0x0100000c: 'arm64',
};

const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CSSLOT_CODEDIRECTORY = 0;
/** Alternate CodeDirectories (other digests) take the index types 0x1000 to 0x1004. */
const CSSLOT_ALTERNATE_CODEDIRECTORIES = 0x1000;
/** The CMS signature: empty or absent in an ad-hoc signature. */
const CSSLOT_SIGNATURESLOT = 0x10000;
/** Special slots -1 to -7: Info.plist, requirements, resources, application, entitlements, -, DER entitlements. */
const MAX_SPECIAL_SLOT = 7;
const CS_ADHOC = 0x2;

/** CodeDirectory.hashType: the digest and its size. */
const HASH_TYPES: Readonly<Record<number, { algorithm: string; size: number }>> = {
  1: { algorithm: 'sha1', size: 20 },
  2: { algorithm: 'sha256', size: 32 },
};

export interface Segment {
  readonly name: string;
  readonly fileOffset: number;
  readonly fileSize: number;
}

export interface MachO {
  /** 'x86_64', 'arm64', or the cputype number of another architecture. */
  readonly cpu: string;
  readonly segments: readonly Segment[];
  /** LC_CODE_SIGNATURE's data: where the signature lies in the file. */
  readonly codeSignature?: { readonly offset: number; readonly size: number };
}

export interface CodeSignature {
  readonly identifier: string;
  readonly adhoc: boolean;
  readonly hashAlgorithm: string;
  readonly pageSize: number;
  readonly codeLimit: number;
  readonly codeSlots: number;
  /** Empty when the signature is valid for these bytes. */
  readonly problems: readonly string[];
}

function cString(bytes: Uint8Array, start: number, end: number): string {
  const zero = bytes.indexOf(0, start);
  return Buffer.from(bytes.subarray(start, zero === -1 || zero > end ? end : zero)).toString(
    'latin1',
  );
}

export function readMachO(bytes: Uint8Array): MachO {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 32 || view.getUint32(0, true) !== MH_MAGIC_64) {
    throw new MachOError('not a thin 64-bit little-endian Mach-O file');
  }
  const cpuType = view.getUint32(4, true);
  const commands = view.getUint32(16, true);
  const commandsEnd = 32 + view.getUint32(20, true);
  if (commandsEnd > bytes.byteLength) throw new MachOError('load commands past the end of file');
  const segments: Segment[] = [];
  let codeSignature: MachO['codeSignature'];
  let at = 32;
  for (let index = 0; index < commands; index += 1) {
    if (at + 8 > commandsEnd) throw new MachOError(`load command ${String(index)} is cut short`);
    const command = view.getUint32(at, true);
    const size = view.getUint32(at + 4, true);
    if (size < 8 || at + size > commandsEnd) {
      throw new MachOError(`load command ${String(index)} has size ${String(size)}`);
    }
    if (command === LC_SEGMENT_64) {
      segments.push({
        name: cString(bytes, at + 8, at + 24),
        fileOffset: Number(view.getBigUint64(at + 40, true)),
        fileSize: Number(view.getBigUint64(at + 48, true)),
      });
    } else if (command === LC_CODE_SIGNATURE) {
      codeSignature = { offset: view.getUint32(at + 8, true), size: view.getUint32(at + 12, true) };
    }
    at += size;
  }
  return {
    cpu: CPU_TYPES[cpuType] ?? String(cpuType),
    segments,
    ...(codeSignature ? { codeSignature } : {}),
  };
}

function digest(algorithm: string, data: Uint8Array): Buffer {
  return createHash(algorithm).update(data).digest();
}

/** Checks one CodeDirectory against the file and the signature's other blobs. */
function checkDirectory(
  bytes: Uint8Array,
  signatureOffset: number,
  slots: ReadonlyMap<number, Uint8Array>,
  directory: Uint8Array,
  problems: string[],
): Omit<CodeSignature, 'problems'> {
  const cd = new DataView(directory.buffer, directory.byteOffset, directory.byteLength);
  if (directory.byteLength < 44 || cd.getUint32(0) !== CSMAGIC_CODEDIRECTORY) {
    throw new MachOError('a CodeDirectory slot holds no CodeDirectory');
  }
  const flags = cd.getUint32(12);
  const hashOffset = cd.getUint32(16);
  const identOffset = cd.getUint32(20);
  const specialSlots = cd.getUint32(24);
  const codeSlots = cd.getUint32(28);
  const codeLimit = cd.getUint32(32);
  const hashSize = cd.getUint8(36);
  const hashType = HASH_TYPES[cd.getUint8(37)];
  const pageSize = 2 ** cd.getUint8(39);
  if (hashType?.size !== hashSize) {
    throw new MachOError(
      `unknown hash type ${String(cd.getUint8(37))} of size ${String(hashSize)}`,
    );
  }
  if (
    hashOffset + codeSlots * hashSize > directory.byteLength ||
    hashOffset < specialSlots * hashSize
  ) {
    throw new MachOError('the CodeDirectory hash slots lie outside it');
  }
  if (codeLimit !== signatureOffset) {
    problems.push(
      `the signature covers ${String(codeLimit)} bytes, not the ${String(signatureOffset)} before it`,
    );
  }
  if (codeSlots !== Math.ceil(codeLimit / pageSize)) {
    problems.push(`${String(codeSlots)} code slots for ${String(codeLimit)} bytes`);
  }
  const slotHash = (slot: number) =>
    directory.subarray(hashOffset + slot * hashSize, hashOffset + (slot + 1) * hashSize);
  let badPages = 0;
  for (let page = 0; page < codeSlots; page += 1) {
    const start = page * pageSize;
    const data = bytes.subarray(start, Math.min(start + pageSize, codeLimit));
    if (!digest(hashType.algorithm, data).equals(slotHash(page))) {
      if (badPages < 3) problems.push(`page ${String(page)} (at ${String(start)}) does not match`);
      badPages += 1;
    }
  }
  if (badPages > 3) problems.push(`${String(badPages)} pages in all do not match`);
  // Special slot -n holds the hash of the blob of type n, all zeros when there is none.
  for (let type = 1; type <= specialSlots; type += 1) {
    const expected = slotHash(-type);
    const present = slots.get(type);
    const ok = present
      ? digest(hashType.algorithm, present).equals(expected)
      : expected.every((byte) => byte === 0);
    if (!ok) problems.push(`special slot -${String(type)} does not match its blob`);
  }
  return {
    identifier: cString(directory, identOffset, directory.byteLength),
    adhoc: (flags & CS_ADHOC) !== 0,
    hashAlgorithm: hashType.algorithm,
    pageSize,
    codeLimit,
    codeSlots,
  };
}

/** Checks the file's signature against its bytes; throws when there is none to check. */
export function verifyCodeSignature(bytes: Uint8Array): CodeSignature {
  const file = readMachO(bytes);
  const location = file.codeSignature;
  if (!location) throw new MachOError('no LC_CODE_SIGNATURE: the file is not signed');
  const problems: string[] = [];
  if (location.offset + location.size > bytes.byteLength) {
    throw new MachOError('the signature lies past the end of the file');
  }
  const linkedit = file.segments.find((segment) => segment.name === '__LINKEDIT');
  if (
    !linkedit ||
    location.offset < linkedit.fileOffset ||
    location.offset + location.size > linkedit.fileOffset + linkedit.fileSize
  ) {
    problems.push('the signature is not inside __LINKEDIT');
  }
  const blob = bytes.subarray(location.offset, location.offset + location.size);
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  if (blob.byteLength < 12 || view.getUint32(0) !== CSMAGIC_EMBEDDED_SIGNATURE) {
    throw new MachOError('the signature is not an embedded-signature SuperBlob');
  }
  const count = view.getUint32(8);
  if (12 + count * 8 > blob.byteLength) throw new MachOError('SuperBlob index past its end');
  const slots = new Map<number, Uint8Array>();
  for (let index = 0; index < count; index += 1) {
    const type = view.getUint32(12 + index * 8);
    const offset = view.getUint32(16 + index * 8);
    if (offset + 8 > blob.byteLength) throw new MachOError(`blob ${String(type)} past the end`);
    const length = view.getUint32(offset + 4);
    if (length < 8 || offset + length > blob.byteLength) {
      throw new MachOError(`blob ${String(type)} has length ${String(length)}`);
    }
    slots.set(type, blob.subarray(offset, offset + length));
  }
  const directory = slots.get(CSSLOT_CODEDIRECTORY);
  if (!directory) throw new MachOError('the SuperBlob has no CodeDirectory');
  for (const type of slots.keys()) {
    if (
      type !== CSSLOT_CODEDIRECTORY &&
      type < CSSLOT_ALTERNATE_CODEDIRECTORIES &&
      type > MAX_SPECIAL_SLOT
    ) {
      problems.push(`blob ${String(type)} is of no known kind`);
    }
  }
  // macOS checks every CodeDirectory it finds: the first and the alternates (other digests).
  const alternates = [...slots.entries()]
    .filter(([type]) => type >= CSSLOT_ALTERNATE_CODEDIRECTORIES && type < CSSLOT_SIGNATURESLOT)
    .map(([, alternate]) => alternate);
  for (const alternate of alternates)
    checkDirectory(bytes, location.offset, slots, alternate, problems);
  const checked = checkDirectory(bytes, location.offset, slots, directory, problems);
  return { ...checked, problems };
}
