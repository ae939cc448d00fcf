import { describe, expect, it } from 'vitest';
import { redactIn, redactUrl } from './redact-url.ts';

describe('redactUrl', () => {
  it.each([
    ['https://hooks.slack.com/services/T000/B000/XXXX', 'https://hooks.slack.com/REDACTED'],
    [
      'https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t',
      'https://chat.googleapis.com/REDACTED',
    ],
    ['http://receiver:8080', 'http://receiver:8080/'],
    ['http://receiver:8080/?token=abc', 'http://receiver:8080/REDACTED'],
    ['https://user:pass@example.com/', 'https://example.com/REDACTED'],
    ['  https://example.com/hook  ', 'https://example.com/REDACTED'],
    ['not a url', '<invalid URL>'],
  ])('%s → %s', (raw, expected) => {
    expect(redactUrl(raw)).toBe(expected);
  });
});

describe('redactIn', () => {
  it('replaces every occurrence of the URL', () => {
    const url = 'https://hooks.slack.com/services/T000/B000/XXXX';
    expect(redactIn(`Failed to parse URL from ${url} (${url})`, url)).toBe(
      'Failed to parse URL from https://hooks.slack.com/REDACTED (https://hooks.slack.com/REDACTED)',
    );
  });
});
