import http from 'node:http';
import https from 'node:https';

export interface ProbeRequest {
  readonly url: string;
  /** PEM of the CA that signed the server certificate. */
  readonly ca?: string;
  /** Only for a component's self-signed health endpoint on loopback. */
  readonly skipTlsVerify?: boolean;
  readonly bearerToken?: string;
  readonly timeoutMs?: number;
  /** A JSON body: the request becomes a POST (creating the fake nodes at boot). */
  readonly json?: unknown;
  /** With `json`: a JSON merge patch instead of a POST. */
  readonly mergePatch?: boolean;
}

export interface ProbeResponse {
  readonly status: number;
  readonly body: string;
}

/**
 * A small GET (or JSON POST) over node:http(s): health checks need a custom CA, which fetch cannot
 * take.
 */
export function probe(request: ProbeRequest): Promise<ProbeResponse> {
  const url = new URL(request.url);
  const client = url.protocol === 'https:' ? https : http;
  const body = request.json === undefined ? undefined : JSON.stringify(request.json);
  const method = body === undefined ? 'GET' : request.mergePatch === true ? 'PATCH' : 'POST';
  const headers: Record<string, string> = {
    ...(request.bearerToken ? { authorization: `Bearer ${request.bearerToken}` } : {}),
    ...(body === undefined
      ? {}
      : {
          'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
        }),
  };
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method,
        headers,
        ca: request.ca,
        rejectUnauthorized: request.skipTlsVerify !== true,
        timeout: request.timeoutMs ?? 5000,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${request.url} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}
