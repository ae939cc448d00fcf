import { ProxyAgent, fetch as undiciFetch } from 'undici';
import type { HttpFetch } from './ports.ts';

export interface HttpTransport {
  readonly fetch: HttpFetch;
  /** Closes the proxy's connections, if any. */
  close(): Promise<void>;
}

/**
 * The fetch for alert and webhook sinks. With `ALERT_WEBHOOK_PROXY` set, requests go through an
 * undici `ProxyAgent` (CONNECT for https targets, absolute-form forwarding for http ones). undici
 * is the HTTP stack of @kubernetes/client-node and is loaded anyway; its fetch serves the direct
 * case too, because Node's global fetch is a second, bundled undici that costs 1.6 MiB of RSS on
 * first use (ADR 0032).
 */
export function createHttpTransport(options: { readonly proxyUrl?: string }): HttpTransport {
  const proxyUrl = options.proxyUrl?.trim();
  if (!proxyUrl) {
    return { fetch: (url, request) => undiciFetch(url, request), close: () => Promise.resolve() };
  }
  const dispatcher = new ProxyAgent(proxyUrl);
  return {
    fetch: (url, request) => undiciFetch(url, { ...request, dispatcher }),
    close: () => dispatcher.close(),
  };
}
