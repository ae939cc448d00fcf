/**
 * Webhook and alert URLs often carry tokens in their path or query (Slack, Teams, Google Chat), and
 * sometimes credentials: only the scheme, host and port may be logged (§13.6, §13.9).
 */
export function redactUrl(url: string): string {
  if (!URL.canParse(url)) return '[invalid URL]';
  const parsed = new URL(url);
  const credentials = parsed.username !== '' || parsed.password !== '' ? 'redacted@' : '';
  const hasSecretParts = parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '';
  return `${parsed.protocol}//${credentials}${parsed.host}/${hasSecretParts ? 'redacted' : ''}`;
}
