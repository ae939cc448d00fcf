import { describe, expect, it } from 'vitest';
import { goJsonString } from './go-json.ts';

describe('goJsonString (Go json.Marshal with HTML escaping)', () => {
  it.each([
    { text: '', expected: '""' },
    { text: 'app-config', expected: '"app-config"' },
    { text: 'a<b>c&d', expected: '"a\\u003cb\\u003ec\\u0026d"' },
    { text: 'x\u2028y\u2029z', expected: '"x\\u2028y\\u2029z"' },
    { text: 'q"b\\s', expected: '"q\\"b\\\\s"' },
    { text: '\b\f\n\r\t', expected: '"\\b\\f\\n\\r\\t"' },
    { text: '\u0000\u0001\u001f', expected: '"\\u0000\\u0001\\u001f"' },
    { text: '\u007f', expected: '"\u007f"' },
    { text: 'é😀～/', expected: '"é😀～/"' },
    { text: 'a\ud800b', expected: '"a\\ufffdb"' },
    { text: 'a\udc00', expected: '"a\\ufffd"' },
    { text: '\ufffd', expected: '"\ufffd"' },
  ])('$text → $expected', ({ text, expected }) => {
    expect(goJsonString(text)).toBe(expected);
  });

  it('agrees with JSON.parse on the decoded value for well-formed text', () => {
    const text = 'a<b>&"\\\n\u2028😀';
    expect(JSON.parse(goJsonString(text))).toBe(text);
  });

  it('each printable ASCII character alone and inside a plain name', () => {
    const html: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026' };
    for (let code = 0x20; code <= 0x7e; code += 1) {
      const char = String.fromCharCode(code);
      const escaped = html[char] ?? JSON.stringify(char).slice(1, -1);
      expect(goJsonString(char)).toBe(`"${escaped}"`);
      expect(goJsonString(`configmap/a${char}b`)).toBe(`"configmap/a${escaped}b"`);
    }
  });
});
