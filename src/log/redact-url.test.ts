import { describe, expect, it } from 'vitest';
import { redactUrl } from './redact-url.ts';

describe('redactUrl', () => {
  it.each([
    ['https://hooks.slack.com/services/T000/B000/XXXX', 'https://hooks.slack.com/redacted'],
    ['https://example.com/?token=abc', 'https://example.com/redacted'],
    ['https://example.com/#frag', 'https://example.com/redacted'],
    ['http://example.com:8080', 'http://example.com:8080/'],
    ['https://user:pass@example.com/', 'https://redacted@example.com/'],
    ['https://user@example.com/x', 'https://redacted@example.com/redacted'],
    ['http://[::1]:9000/hook', 'http://[::1]:9000/redacted'],
    ['not a url with a token', '[invalid URL]'],
  ])('%s → %s', (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted);
  });
});
