// Issue 10, defect 9: no byte of a Secret reaches any output of kreload. Secrets whose data and
// annotations (kubectl's last-applied-configuration among them) carry a unique marker are listed,
// watched, changed and deleted while workloads roll; then every log line, /metrics, /readyz,
// /healthz, /live and every Event of the namespace are searched for the marker in any encoding.
// Undecodable answers (non-JSON Secret lists, bad watch lines) are covered by the component tests
// of src/kube/ (list-watch.test.ts, transport.test.ts), which need a server that misbehaves.
import { randomBytes } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { probe } from '../cluster/probes.ts';
import { AUTO, SECRET_RELOAD } from '../harness/annotations.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { envVarName, sourceHash, sourceKey, type SecretSpec } from '../harness/sources.ts';
import { APP, podSpec } from '../harness/workloads.ts';

const fixture = useKreload({
  name: 'secret-hygiene',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
});

const MARKER = `kreload-marker-${randomBytes(8).toString('hex')}`;

/** The marker as it may appear: plain, base64 at each alignment, hex, JSON-escaped. */
function encodingsOf(marker: string): string[] {
  const bytes = Buffer.from(marker, 'utf8');
  const base64 = [0, 1, 2].map((shift) => {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    // Skip the characters that depend on the bytes before and after the marker.
    return encoded.slice(Math.ceil((shift * 4) / 3) + 1, -4);
  });
  return [marker, ...base64, bytes.toString('hex'), JSON.stringify(marker).slice(1, -1)];
}

function secretWithMarker(name: string, version: string): SecretSpec {
  const value = `${MARKER}-${version}`;
  return {
    type: 'SECRET',
    name,
    data: { password: value, 'config.json': JSON.stringify({ token: value }) },
    annotations: {
      note: `rotated ${value}`,
      'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name },
        stringData: { password: value },
      }),
    },
  };
}

describe('Secret bytes never reach an output (issue 10, defect 9)', () => {
  it('after lists, watches, changes and rolls, no output holds a marker of a Secret', async () => {
    const { namespace, kreload, workloads, sources, cluster } = fixture;
    const byEnv = secretWithMarker('hygiene-env', 'a');
    const byName = secretWithMarker('hygiene-named', 'a');
    const unused = secretWithMarker('hygiene-unused', 'a');
    for (const secret of [byEnv, byName, unused]) await sources.create(namespace, secret);

    const auto = await workloads.create('Deployment', {
      namespace,
      name: 'hygiene-auto',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ secretRef: { name: byEnv.name } }] } }),
    });
    const named = await workloads.create('Deployment', {
      namespace,
      name: 'hygiene-named',
      annotations: { [SECRET_RELOAD]: byName.name },
      podSpec: podSpec({
        app: {
          env: [
            {
              name: 'PASSWORD',
              valueFrom: { secretKeyRef: { name: byName.name, key: 'password' } },
            },
          ],
        },
      }),
    });
    await waitForBaseline(workloads, auto, { [sourceKey(byEnv)]: sourceHash(byEnv) });
    await waitForBaseline(workloads, named, { [sourceKey(byName)]: sourceHash(byName) });

    const before = await scrapeMetrics(kreload);
    const changedEnv = secretWithMarker(byEnv.name, 'b');
    const changedName = secretWithMarker(byName.name, 'b');
    await sources.replace(namespace, changedEnv);
    await sources.replace(namespace, changedName);
    await sources.replace(namespace, secretWithMarker(unused.name, 'b'));
    await waitForEnv(workloads, auto, {
      container: APP,
      name: envVarName(changedEnv),
      value: sourceHash(changedEnv),
    });
    await waitForEnv(workloads, named, {
      container: APP,
      name: envVarName(changedName),
      value: sourceHash(changedName),
    });
    await sources.delete(namespace, unused);
    await waitUntilSettled(kreload, {
      since: before,
      events: [
        { resource: 'secrets', event: 'update', atLeast: 3 },
        { resource: 'secrets', event: 'delete', atLeast: 1 },
      ],
    });

    const settled = await scrapeMetrics(kreload);
    // The rest_client_* series are recorded for real requests (lists, watches and patches).
    expect(
      settled.value('rest_client_requests_total', { code: '200', method: 'GET' }),
    ).toBeGreaterThan(0);
    expect(settled.value('rest_client_requests_total', { method: 'PATCH' })).toBeGreaterThan(0);
    expect(
      settled.value('rest_client_request_duration_seconds_count', { verb: 'GET' }),
    ).toBeGreaterThan(0);

    const endpoints = await Promise.all(
      ['/metrics', '/readyz', '/healthz', '/live'].map(
        async (pathname) => (await probe({ url: kreload.url(pathname) })).body,
      ),
    );
    const events = await cluster.kc.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace });
    const log = await kreload.readLog();
    expect(log).toContain(byEnv.name); // the log is the real one, and kreload did log the Secret
    expect(events.items.length).toBeGreaterThan(0);
    const outputs: Record<string, string> = {
      log,
      events: JSON.stringify(events.items),
      ...Object.fromEntries(endpoints.map((body, index) => [`endpoint ${String(index)}`, body])),
    };
    for (const [output, text] of Object.entries(outputs)) {
      for (const encoding of encodingsOf(MARKER)) {
        expect(text.includes(encoding), `${output} holds the marker as ${encoding}`).toBe(false);
      }
    }
  });
});
