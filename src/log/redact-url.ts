/**
 * Webhook, alert and proxy URLs often carry tokens in their path or query (Slack, Teams, Google
 * Chat) and sometimes credentials: only scheme, host and port may be logged (§13.6, §13.9).
 */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return '<invalid URL>';
  }
  const hidden =
    url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '';
  return `${url.protocol}//${url.host}/${hidden ? 'REDACTED' : ''}`;
}

/** Replaces every occurrence of `secretUrl` in `text` with its redacted form. */
export function redactIn(text: string, secretUrl: string): string {
  const trimmed = secretUrl.trim();
  return trimmed === '' ? text : text.split(trimmed).join(redactUrl(trimmed));
}
