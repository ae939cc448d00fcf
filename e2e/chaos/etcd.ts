// etcd compaction through etcd's own gRPC gateway (JSON over HTTP on the client port), so no
// etcdctl is needed: after it, no watch can resume from a resourceVersion older than the compacted
// revision, and kube-apiserver answers such a watch with 410 Gone once its watch cache is rebuilt.

export class EtcdError extends Error {
  override readonly name = 'EtcdError';
}

async function gateway(port: number, pathname: string, body: object): Promise<unknown> {
  const response = await fetch(`http://127.0.0.1:${port}${pathname}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (!response.ok) {
    throw new EtcdError(`etcd ${pathname} answered ${response.status}: ${text.trim()}`);
  }
  return JSON.parse(text) as unknown;
}

/** The store's current revision (the header of any range request). */
export async function currentRevision(port: number): Promise<number> {
  // A range over one key nobody writes: only the header matters.
  const answer = await gateway(port, '/v3/kv/range', {
    key: Buffer.from('/kreload-e2e/none').toString('base64'),
  });
  const revision: unknown = Reflect.get(
    (Reflect.get(answer as object, 'header') as object | undefined) ?? {},
    'revision',
  );
  const parsed = Number(revision);
  if (!Number.isSafeInteger(parsed) || parsed <= 0) {
    throw new EtcdError(`etcd range answered without a revision: ${JSON.stringify(answer)}`);
  }
  return parsed;
}

/** Compacts (physically) up to the current revision; returns that revision. */
export async function compactToNow(port: number): Promise<number> {
  const revision = await currentRevision(port);
  await gateway(port, '/v3/kv/compaction', { revision: String(revision), physical: true });
  return revision;
}
