/**
 * JSON string encoding as Go's `encoding/json` writes it with HTML escaping on (the default of
 * `json.Marshal`), so that annotations kreload writes are byte-identical to Reloader's (§6.2).
 */

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

function unicodeEscape(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `< > &` (HTML), U+2028/U+2029 (JavaScript line terminators) and control characters. */
function needsUnicodeEscape(code: number): boolean {
  return (
    code < 0x20 ||
    code === 0x3c ||
    code === 0x3e ||
    code === 0x26 ||
    code === 0x2028 ||
    code === 0x2029
  );
}

function isLoneSurrogate(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(index + 1);
    return !(next >= 0xdc00 && next <= 0xdfff);
  }
  if (code >= 0xdc00 && code <= 0xdfff) {
    const previous = index > 0 ? text.charCodeAt(index - 1) : 0;
    return !(previous >= 0xd800 && previous <= 0xdbff);
  }
  return false;
}

/** Printable ASCII that Go writes as is: no `"`, `\\`, `<`, `>` or `&`. */
const VERBATIM = /^[\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\x5b\x5d-\x7e]*$/;

/** A quoted JSON string; a lone surrogate becomes `\ufffd`, as Go writes invalid UTF-8. */
export function goJsonString(text: string): string {
  // Source keys and hashes, formatted by the hundred per state annotation: one test, no walk.
  if (VERBATIM.test(text)) return `"${text}"`;
  let out = '"';
  for (let index = 0; index < text.length; index++) {
    const char = text.charAt(index);
    const code = text.charCodeAt(index);
    const short = SHORT_ESCAPES[char];
    if (short !== undefined) out += short;
    else if (needsUnicodeEscape(code)) out += unicodeEscape(code);
    else if (isLoneSurrogate(text, index)) out += '\\ufffd';
    else out += char;
  }
  return `${out}"`;
}
