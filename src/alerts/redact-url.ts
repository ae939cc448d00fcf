/**
 * Keeps scheme, host and port; drops credentials, path, query and fragment, which often carry
 * tokens (Slack, Teams and Google Chat URLs do). Used for every log line and error message.
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
