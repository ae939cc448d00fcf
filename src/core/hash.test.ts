import { describe, expect, it } from 'vitest';
import { hashConfigMap, hashSecret, hashSecretProviderClassPodStatus, sha1Hex } from './hash.ts';
import { DELETE_MARKER } from './types.ts';

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

describe('hash test vectors (§4.2)', () => {
  it.each([
    {
      vector: '1 empty ConfigMap',
      hash: () => hashConfigMap(undefined, undefined),
      expected: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
    },
    {
      vector: '1 empty ConfigMap (empty maps)',
      hash: () => hashConfigMap({}, {}),
      expected: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
    },
    {
      vector: '1 empty Secret',
      hash: () => hashSecret(undefined),
      expected: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
    },
    {
      vector: '2 key=value',
      hash: () => hashConfigMap({ key: 'value' }, undefined),
      expected: 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0',
    },
    {
      vector: '3 two keys',
      hash: () => hashConfigMap({ b: '2', a: '1' }, undefined),
      expected: 'f83e99e324ba68ccc373a58ef1eb42f8ab88646a',
    },
    {
      vector: '4 data and binaryData',
      hash: () => hashConfigMap({ test: 'test' }, { bintest: 'dGVzdA==' }),
      expected: '0d58150de76a895b24f4ca213f590766160c4349',
    },
    {
      vector: '4 binaryData sent unpadded is re-encoded canonically',
      hash: () => hashConfigMap({ test: 'test' }, { bintest: 'dGVzdA' }),
      expected: '0d58150de76a895b24f4ca213f590766160c4349',
    },
    {
      vector: '5 upper case sorts first',
      hash: () => hashConfigMap({ a: '1', B: '2' }, undefined),
      expected: '4494acdf58d32d501d9948750606eb7820c3d3b9',
    },
    {
      vector: '6 1 MB value',
      hash: () => hashConfigMap({ big: 'a'.repeat(1_000_000) }, undefined),
      expected: 'd8b400f8752010b060ea638cb774f3852f8eecbc',
    },
    {
      vector: '7 Secret',
      hash: () => hashSecret({ password: base64('s3cr3t') }),
      expected: 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c',
    },
    {
      vector: '8 Secret with bytes that are not UTF-8',
      hash: () => hashSecret({ user: 'YWRtaW4=', cert: '/wD+' }),
      expected: 'e5d9c4c91abefb185dc0a772c7a94ad6da2ca3fe',
    },
    {
      vector: '9 SPCPS with objects',
      hash: () =>
        hashSecretProviderClassPodStatus('my-spc', [
          { id: 'secret/db-pass', version: 'v2' },
          { id: 'secret/api-key', version: 'v1' },
        ]),
      expected: 'c695e5b2d20998c25dce659e5b19e52936c3591e',
    },
    {
      vector: '10 SPCPS without objects',
      hash: () => hashSecretProviderClassPodStatus('my-spc', []),
      expected: '40c125ef6cd81879ba7d9bf324830530eaee9893',
    },
    {
      vector: '11 SPCPS with non-ASCII ids sorts by UTF-8 bytes',
      hash: () =>
        hashSecretProviderClassPodStatus('s', [
          { id: '\u{1F600}', version: '1' },
          { id: '\uFF5E', version: '1' },
        ]),
      expected: 'b217c464506a4ea05727a9011c2c0c57c3673705',
    },
    {
      vector: '12 MARKER',
      hash: () => sha1Hex('__RELOADER_EMPTY_DELETE_MARKER__'),
      expected: 'aae45badef99284e4dae01d6046154ea9d99532f',
    },
    {
      vector: '13 plain string',
      hash: () => sha1Hex('www.stakater.com'),
      expected: 'abd4ed82fb04548388a6cf3c339fd9dc84d275df',
    },
  ])('$vector', ({ hash, expected }) => {
    expect(hash()).toBe(expected);
  });
});

describe('hashing details', () => {
  it('DELETE_MARKER is the SHA-1 of the marker string', () => {
    expect(sha1Hex('__RELOADER_EMPTY_DELETE_MARKER__')).toBe(DELETE_MARKER);
  });

  it('hashes a byte array exactly as given', () => {
    expect(sha1Hex(new Uint8Array([0x6b, 0x65, 0x79, 0x3d, 0x76, 0x61, 0x6c, 0x75, 0x65]))).toBe(
      'dc30e0faa89a70dec1033016a2309bbeb9efcbd0',
    );
  });

  it('a Secret hashes its decoded bytes, so the same text as a ConfigMap gives the same hash', () => {
    expect(hashSecret({ key: base64('value') })).toBe(hashConfigMap({ key: 'value' }, undefined));
  });

  it('a UTF-16 sort would give the wrong vector 11 hash', () => {
    const utf16Order = ['SecretProviderClassName=s', '\u{1F600}=1', '\uFF5E=1'].sort().join(';');
    expect(sha1Hex(utf16Order)).toBe('b072753c68e6d4dd9193b82f85bd2f7f533a969d');
  });

  it('data values are UTF-8 encoded', () => {
    expect(hashConfigMap({ k: 'é' }, undefined)).toBe(sha1Hex(Buffer.from('k=\xc3\xa9', 'latin1')));
  });
});

/** §4.1 spelled out the slow way: whole `key=value` byte strings, sorted, joined by `;`. */
function referenceHash(entries: readonly (readonly [string, Buffer])[]): string {
  const whole = entries.map(([key, value]) => Buffer.concat([Buffer.from(`${key}=`), value]));
  whole.sort((a, b) => Buffer.compare(a, b));
  return sha1Hex(
    Buffer.concat(whole.flatMap((bytes, i) => (i === 0 ? [bytes] : [Buffer.from(';'), bytes]))),
  );
}

describe('hashing without copies gives the reference bytes', () => {
  // Keys where the `key=` order alone would be wrong or undecided: `=` inside a key, a repeated id.
  const tricky: readonly (readonly [string, string])[][] = [
    [
      ['a', 'x'],
      ['a=', 'y'],
      ['a.b', 'z'],
    ],
    [
      ['a=b', '1'],
      ['a', '=c'],
    ],
    [
      ['k', 'v'],
      ['k=', ''],
    ],
    [
      ['😀', '1'],
      ['\uffff', '2'],
      ['é', '3'],
      ['e', '4'],
    ],
    [
      ['', 'empty key'],
      ['a', ''],
    ],
    // ASCII keys, hashed from one string: `key=` orders `a-` and `a.` before `a`.
    [
      ['a', 'x'],
      ['a-', 'y'],
      ['a.', 'z'],
      ['b', ''],
    ],
    // Lone surrogates on both sides of an entry boundary stay apart.
    [
      ['m', 'a\ud83d'],
      ['n', '\ude00b'],
      ['o', '\ud800'],
    ],
    [
      ['big', 'x'.repeat(5000)],
      ['a', 'b'],
    ],
  ];

  it.each(tricky)('ConfigMap data %#', (...entries) => {
    const data = Object.fromEntries(entries);
    expect(hashConfigMap(data, undefined)).toBe(
      referenceHash(Object.entries(data).map(([k, v]) => [k, Buffer.from(v)])),
    );
  });

  it('a key in both data and binaryData is ordered by its values', () => {
    expect(hashConfigMap({ k: 'w' }, { k: base64('v') })).toBe(
      referenceHash([
        ['k', Buffer.from('w')],
        ['k', Buffer.from(base64('v'))],
      ]),
    );
  });

  it.each(tricky)('Secret data %#', (...entries) => {
    const data = Object.fromEntries(entries.map(([k, v]) => [k, base64(v)]));
    expect(hashSecret(data)).toBe(
      referenceHash(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    );
  });

  it.each([
    'aGVsbG8',
    'aGV sbG8=',
    'aGV\nsbG8=',
    'a-_b',
    'a+/b',
    '====',
    'a',
    '!!!',
    'QQ==QQ==',
    'é',
  ])('a Secret value of unusual wire base64 %j decodes as Buffer.from does', (wire) => {
    expect(hashSecret({ key: wire })).toBe(referenceHash([['key', Buffer.from(wire, 'base64')]]));
  });

  it('an SPC status that repeats an id is ordered by its versions', () => {
    const objects = [
      { id: 'dup', version: 'b' },
      { id: 'dup', version: 'a' },
    ];
    expect(hashSecretProviderClassPodStatus('cls', objects)).toBe(
      referenceHash([
        ['dup', Buffer.from('b')],
        ['dup', Buffer.from('a')],
        ['SecretProviderClassName', Buffer.from('cls')],
      ]),
    );
  });

  it('random maps hash as the reference does', () => {
    const alphabet = ['a', 'b', '=', '.', '-', 'é', '😀', 'Z', '0'];
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const word = (max: number): string =>
      Array.from({ length: next(max) }, () => alphabet[next(alphabet.length)]).join('');
    for (let round = 0; round < 300; round++) {
      const data = Object.fromEntries(Array.from({ length: next(6) }, () => [word(4), word(8)]));
      expect(hashConfigMap(data, undefined)).toBe(
        referenceHash(Object.entries(data).map(([k, v]) => [k, Buffer.from(v)])),
      );
    }
  });
});
