import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AlertSender } from './alert-sender.ts';
import type { AlertDeliveryError } from './alert-sender.ts';
import type { AlertSinkName, RollAlert } from './alert-format.ts';
import { createHttpTransport } from './http-transport.ts';
import type { DeliveryTimers } from './ports.ts';
import { WebhookNotifier, webhookBody } from './webhook-notifier.ts';
import type { WebhookDeliveryError, WebhookNotification } from './webhook-notifier.ts';

interface Received {
  readonly method: string | undefined;
  readonly path: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string;
}

const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve);
  });
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  );
  const address = server.address();
  if (!isAddressInfo(address)) throw new Error('server is not listening on a TCP port');
  return address.port;
}

function isAddressInfo(address: ReturnType<Server['address']>): address is AddressInfo {
  return typeof address === 'object' && address !== null;
}

/** A sink on 127.0.0.1 that answers with the scripted statuses (then 200) and records requests. */
async function aReceiver(statuses: number[] = []): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      received.push({
        method: req.method,
        path: req.url,
        contentType: req.headers['content-type'],
        body,
      });
      const status = statuses.shift() ?? 200;
      res.writeHead(status, status >= 300 && status < 400 ? { location: '/elsewhere' } : {});
      res.end('ok');
    });
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/services/T000/secret-token`, received };
}

/** Backoff waits run at once (their lengths are recorded); per-attempt timeouts never fire. */
function instantTimers(): DeliveryTimers & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    schedule: (delayMs, callback) => {
      if (delayMs >= 60_000) return () => undefined;
      delays.push(delayMs);
      const immediate = setImmediate(callback);
      return () => {
        clearImmediate(immediate);
      };
    },
  };
}

const ALERT: RollAlert = {
  sources: [{ type: 'CONFIGMAP', name: 'app-config' }],
  workload: { kind: 'Deployment', namespace: 'team-a', name: 'api' },
};

const MESSAGE =
  'Reloader detected changes in *app-config* of type *CONFIGMAP* in namespace *team-a*. Hence reloaded *api* of type *Deployment* in namespace *team-a*';

function anAlertSender(
  url: string,
  sink: AlertSinkName,
  fetchImpl = createHttpTransport({}).fetch,
) {
  const errors: string[] = [];
  const failures: AlertDeliveryError[] = [];
  const timers = instantTimers();
  const sender = new AlertSender({
    url,
    sink,
    fetch: fetchImpl,
    timers,
    errors: { recordError: (type) => errors.push(type) },
    onFailure: (error) => failures.push(error),
    timeoutMs: 300_000,
    now: () => new Date('2026-12-06T05:00:00.123Z'),
  });
  sender.start();
  closers.push(() => sender.stop());
  return { sender, errors, failures, timers };
}

describe('AlertSender over HTTP', () => {
  it.each<[AlertSinkName, string, string]>([
    [
      'slack',
      'application/json',
      JSON.stringify({ attachments: [{ color: 'good', author_name: 'Reloader', text: MESSAGE }] }),
    ],
    ['teams', 'application/json', JSON.stringify({ text: MESSAGE })],
    ['gchat', 'application/json', JSON.stringify({ text: MESSAGE })],
    [
      'webhook',
      'text/plain',
      'Reloader detected changes in app-config of type CONFIGMAP in namespace team-a. Hence reloaded api of type Deployment in namespace team-a',
    ],
    [
      'structured',
      'application/json',
      JSON.stringify({
        event: 'reload',
        workloadKind: 'Deployment',
        workloadName: 'api',
        workloadNamespace: 'team-a',
        resourceKind: 'CONFIGMAP',
        resourceName: 'app-config',
        resourceNamespace: 'team-a',
        resources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
        timestamp: '2026-12-06T05:00:00Z',
      }),
    ],
  ])('posts the %s payload', async (sink, contentType, body) => {
    const receiver = await aReceiver();
    const { sender, errors } = anAlertSender(receiver.url, sink);
    sender.send(ALERT);
    await sender.idle();
    expect(receiver.received).toEqual([
      { method: 'POST', path: '/services/T000/secret-token', contentType, body },
    ]);
    expect(errors).toEqual([]);
  });

  it.each<[AlertSinkName, number, number, boolean]>([
    ['slack', 204, 1, true],
    ['slack', 400, 1, false],
    ['teams', 202, 1, false],
    ['gchat', 201, 1, false],
    ['webhook', 201, 1, true],
    ['webhook', 302, 1, false],
    ['slack', 301, 1, false],
    ['teams', 503, 3, false],
    ['webhook', 429, 3, false],
  ])('%s answered %i: %i request(s), delivered %s', async (sink, status, requests, delivered) => {
    const receiver = await aReceiver([status, status, status]);
    const { sender, errors, failures } = anAlertSender(receiver.url, sink);
    sender.send(ALERT);
    await sender.idle();
    expect(receiver.received).toHaveLength(requests);
    expect(errors).toEqual(delivered ? [] : ['alert_error']);
    expect(failures).toHaveLength(delivered ? 0 : 1);
  });

  it('retries after 1 s and 2 s and succeeds on the third attempt', async () => {
    const receiver = await aReceiver([500, 502]);
    const { sender, errors, timers } = anAlertSender(receiver.url, 'slack');
    sender.send(ALERT);
    await sender.idle();
    expect(receiver.received).toHaveLength(3);
    expect(timers.delays).toEqual([1000, 2000]);
    expect(errors).toEqual([]);
  });

  it('does not follow a redirect', async () => {
    const receiver = await aReceiver([302]);
    const { sender, failures } = anAlertSender(receiver.url, 'webhook');
    sender.send(ALERT);
    await sender.idle();
    expect(receiver.received.map((r) => r.path)).toEqual(['/services/T000/secret-token']);
    expect(failures[0]?.message).toBe(
      `alert failed after 1 attempt(s): status 302 (webhook ${new URL(receiver.url).origin}/REDACTED)`,
    );
  });

  it('counts an unreachable sink once, after 3 attempts, without the URL token in the error', async () => {
    const server = createServer();
    const port = await listen(server);
    await closers.pop()?.();
    const { sender, errors, failures } = anAlertSender(
      `http://127.0.0.1:${port}/hook/secret-token`,
      'slack',
    );
    sender.send(ALERT);
    await sender.idle();
    expect(errors).toEqual(['alert_error']);
    expect(failures.map((f) => f.message)).toEqual([
      `alert failed after 3 attempt(s): network error: ECONNREFUSED (slack http://127.0.0.1:${port}/REDACTED)`,
    ]);
  });

  it('sends nothing while it may not send', async () => {
    const receiver = await aReceiver();
    const sender = new AlertSender({
      url: receiver.url,
      sink: 'slack',
      fetch: createHttpTransport({}).fetch,
      timers: instantTimers(),
      errors: { recordError: () => undefined },
      canSend: () => false,
    });
    sender.start();
    sender.send(ALERT);
    await sender.idle();
    expect(receiver.received).toEqual([]);
  });

  it('prefixes ALERT_ADDITIONAL_INFO', async () => {
    const receiver = await aReceiver();
    const sender = new AlertSender({
      url: receiver.url,
      sink: 'teams',
      additionalInfo: 'prod-eu',
      fetch: createHttpTransport({}).fetch,
      timers: instantTimers(),
      errors: { recordError: () => undefined },
    });
    sender.start();
    sender.send(ALERT);
    await sender.idle();
    expect(receiver.received[0]?.body).toBe(JSON.stringify({ text: `prod-eu : ${MESSAGE}` }));
    await sender.stop();
  });

  it('goes through ALERT_WEBHOOK_PROXY when one is set', async () => {
    const receiver = await aReceiver();
    const proxied: string[] = [];
    const proxy = createServer((req, res) => {
      proxied.push(`${req.method ?? ''} ${req.url ?? ''}`);
      const target = new URL(req.url ?? '');
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    const proxyPort = await listen(proxy);
    const transport = createHttpTransport({ proxyUrl: `http://127.0.0.1:${proxyPort}` });
    closers.push(() => transport.close());
    const { sender, errors } = anAlertSender(receiver.url, 'gchat', transport.fetch);
    sender.send(ALERT);
    await sender.idle();
    expect(proxied).toEqual([`POST ${receiver.url}`]);
    expect(receiver.received.map((r) => r.body)).toEqual([JSON.stringify({ text: MESSAGE })]);
    expect(errors).toEqual([]);
  });
});

const NOTIFICATION: WebhookNotification = {
  event: 'update',
  source: { type: 'CONFIGMAP', namespace: 'team-a', name: 'app-config' },
  hash: 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0',
  workloads: [{ kind: 'Deployment', namespace: 'team-a', name: 'api' }],
  observedAt: new Date('2026-01-02T03:04:05.678Z'),
};

function aNotifier(url: string) {
  const errors: string[] = [];
  const failures: WebhookDeliveryError[] = [];
  const timers = instantTimers();
  const notifier = new WebhookNotifier({
    url,
    fetch: createHttpTransport({}).fetch,
    timers,
    errors: { recordError: (type) => errors.push(type) },
    onFailure: (error) => failures.push(error),
    timeoutMs: 300_000,
  });
  notifier.start();
  closers.push(() => notifier.stop());
  return { notifier, errors, failures, timers };
}

describe('webhookBody', () => {
  it('is the §13.7 body', () => {
    expect(webhookBody(NOTIFICATION)).toBe(
      '{"webhook":"update successful","event":"update",' +
        '"source":{"kind":"ConfigMap","namespace":"team-a","name":"app-config","hash":"dc30e0faa89a70dec1033016a2309bbeb9efcbd0"},' +
        '"workloads":[{"kind":"Deployment","namespace":"team-a","name":"api"}],' +
        '"observedAt":"2026-01-02T03:04:05Z"}',
    );
  });

  it.each([
    ['SECRET', 'Secret'],
    ['SECRETPROVIDERCLASS', 'SecretProviderClass'],
  ] as const)('names a %s source %s, with an empty workload list', (type, kind) => {
    const body = webhookBody({
      ...NOTIFICATION,
      event: 'delete',
      source: { ...NOTIFICATION.source, type },
      hash: 'aae45badef99284e4dae01d6046154ea9d99532f',
      workloads: [],
    });
    expect(body).toContain(`"event":"delete","source":{"kind":"${kind}",`);
    expect(body).toContain('"hash":"aae45badef99284e4dae01d6046154ea9d99532f"},"workloads":[],');
  });
});

describe('WebhookNotifier over HTTP', () => {
  it('posts the JSON body', async () => {
    const receiver = await aReceiver([204]);
    const { notifier, errors } = aNotifier(receiver.url);
    notifier.notify(NOTIFICATION);
    await notifier.idle();
    expect(receiver.received).toEqual([
      {
        method: 'POST',
        path: '/services/T000/secret-token',
        contentType: 'application/json',
        body: webhookBody(NOTIFICATION),
      },
    ]);
    expect(errors).toEqual([]);
  });

  it('retries 5xx up to 5 times with backoff, then counts one webhook_error', async () => {
    const receiver = await aReceiver([503, 503, 503, 503, 503, 503, 503]);
    const { notifier, errors, failures, timers } = aNotifier(receiver.url);
    notifier.notify(NOTIFICATION);
    await notifier.idle();
    expect(receiver.received).toHaveLength(6);
    expect(timers.delays).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(errors).toEqual(['webhook_error']);
    expect(failures.map((f) => f.message)).toEqual([
      `webhook for update of CONFIGMAP team-a/app-config failed after 6 attempt(s): status 503 (${new URL(receiver.url).origin}/REDACTED)`,
    ]);
  });

  it.each([
    [404, 1],
    [302, 1],
    [409, 1],
  ])('does not retry %i', async (status, requests) => {
    const receiver = await aReceiver([status]);
    const { notifier, errors } = aNotifier(receiver.url);
    notifier.notify(NOTIFICATION);
    await notifier.idle();
    expect(receiver.received).toHaveLength(requests);
    expect(errors).toEqual(['webhook_error']);
  });
});
