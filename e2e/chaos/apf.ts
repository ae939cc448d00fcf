// The 429 storm: API Priority and Fairness objects that put kreload's writes in one namespace on a
// priority level without seats, while its reads and its writes anywhere else go on as before.
//
// flowcontrol v1 allows `nominalConcurrencyShares: 0`; with nothing lent or borrowed the level's
// concurrency limit is 0. kube-apiserver's queue set still lets a request through when *nothing*
// of the level is executing (a request wider than the limit may run alone), so a level without
// seats alone rejects nothing: a one-at-a-time client always gets through. The storm therefore
// also holds the level busy: a "seat holder" ServiceAccount, matched by the same FlowSchema, sends
// a dry-run POST whose body it never finishes. The request was admitted (the level's one running
// request) before its body is read, so while it waits every other request of the level, kreload's
// writes in that namespace, is rejected at once with 429 and a Retry-After (`limitResponse:
// Reject`).
import {
  CoreV1Api,
  FlowcontrolApiserverV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { readFile } from 'node:fs/promises';
import type { ClientRequest } from 'node:http';
import { request } from 'node:https';
import { PollGiveUpError, pollUntil } from '../harness/poll.ts';

const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection'];
/** Below every suggested FlowSchema but `exempt` (1) and `probes` (2): nothing else matches first. */
const MATCHING_PRECEDENCE = 50;
/** kube-apiserver's APF config controller picks a change up within a few seconds. */
const EFFECTIVE_TIMEOUT_MS = 30_000;
/** The name the probe patches; the storm's 429 count leaves its requests out. */
export const APF_PROBE_NAME = 'chaos-apf-probe';
export const APF_HOLDER = 'chaos-seat-holder';
/** A body the holder announces but never sends in full. */
const HOLDER_BODY_BYTES = 1_000_000;
const HOLDER_TRICKLE_MS = 1000;
const FLOW_SCHEMA_HEADER = 'x-kubernetes-pf-flowschema-uid';

/** kube-apiserver's answer to one request: status and the FlowSchema APF classified it by. */
interface Answer {
  readonly status: number;
  readonly flowSchemaUid: string | undefined;
}

interface Endpoint {
  readonly server: string;
  readonly ca: Buffer;
}

function send(
  endpoint: Endpoint,
  token: string,
  options: { method: string; path: string; contentType?: string; contentLength?: number },
): { req: ClientRequest; answer: Promise<Answer> } {
  const url = new URL(options.path, endpoint.server);
  const req = request(url, {
    method: options.method,
    ca: endpoint.ca,
    agent: false,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(options.contentType === undefined ? {} : { 'Content-Type': options.contentType }),
      ...(options.contentLength === undefined
        ? {}
        : { 'Content-Length': String(options.contentLength) }),
    },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.once('response', (response) => {
      response.resume();
      const uid = response.headers[FLOW_SCHEMA_HEADER];
      resolve({
        status: response.statusCode ?? 0,
        flowSchemaUid: typeof uid === 'string' ? uid : undefined,
      });
    });
    req.once('error', reject);
  });
  return { req, answer };
}

export interface ApfStormDeps {
  readonly admin: KubeConfig;
  readonly server: string;
  readonly caPath: string;
  /** Object names: PriorityLevelConfiguration, FlowSchema, the holder's RBAC. */
  readonly name: string;
  readonly kreload: { readonly namespace: string; readonly name: string; readonly token: string };
  /** The throttled namespace. */
  readonly namespace: string;
  /** A token for ServiceAccount APF_HOLDER in kreload's namespace (created by begin()). */
  readonly mintHolderToken: () => Promise<string>;
}

export class ApfStorm {
  readonly #deps: ApfStormDeps;
  readonly #flowControl: FlowcontrolApiserverV1Api;
  #holder: ClientRequest | undefined;
  #trickle: NodeJS.Timeout | undefined;
  /** The holder's status when kube-apiserver answered it: it no longer holds the seat. */
  #holderAnswered: number | undefined;

  constructor(deps: ApfStormDeps) {
    this.#deps = deps;
    this.#flowControl = deps.admin.makeApiClient(FlowcontrolApiserverV1Api);
  }

  async #endpoint(): Promise<Endpoint> {
    return { server: this.#deps.server, ca: await readFile(this.#deps.caPath) };
  }

  /** A dry-run PATCH of ConfigMap APF_PROBE_NAME in the namespace as kreload. */
  async probe(): Promise<Answer> {
    const { req, answer } = send(await this.#endpoint(), this.#deps.kreload.token, {
      method: 'PATCH',
      path: `/api/v1/namespaces/${this.#deps.namespace}/configmaps/${APF_PROBE_NAME}?dryRun=All`,
      contentType: 'application/merge-patch+json',
    });
    req.end(JSON.stringify({ metadata: { labels: { probe: 'true' } } }));
    return answer;
  }

  /** Level, FlowSchema and the holder; returns once a probe write as kreload gets 429. */
  async begin(): Promise<void> {
    const { name, namespace, kreload } = this.#deps;
    await this.#installHolder();
    await this.#flowControl.createPriorityLevelConfiguration({
      body: {
        metadata: { name },
        spec: {
          type: 'Limited',
          limited: {
            nominalConcurrencyShares: 0,
            lendablePercent: 0,
            borrowingLimitPercent: 0,
            limitResponse: { type: 'Reject' },
          },
        },
      },
    });
    const flowSchema = await this.#flowControl.createFlowSchema({
      body: {
        metadata: { name },
        spec: {
          priorityLevelConfiguration: { name },
          matchingPrecedence: MATCHING_PRECEDENCE,
          distinguisherMethod: { type: 'ByUser' },
          rules: [
            {
              subjects: [
                {
                  kind: 'ServiceAccount',
                  serviceAccount: { namespace: kreload.namespace, name: kreload.name },
                },
                {
                  kind: 'ServiceAccount',
                  serviceAccount: { namespace: kreload.namespace, name: APF_HOLDER },
                },
              ],
              resourceRules: [
                { verbs: WRITE_VERBS, apiGroups: ['*'], resources: ['*'], namespaces: [namespace] },
              ],
            },
          ],
        },
      },
    });
    const uid = flowSchema.metadata?.uid;
    await pollUntil(async () => (await this.probe()).flowSchemaUid === uid, {
      timeoutMs: EFFECTIVE_TIMEOUT_MS,
      intervalMs: 200,
      describe: `kube-apiserver to classify kreload's writes in ${namespace} by FlowSchema ${name}`,
    });
    await this.#holdSeat();
    await pollUntil(
      async () => {
        if (this.#holderAnswered !== undefined) {
          throw new PollGiveUpError(
            `the seat holder was answered ${String(this.#holderAnswered)} before the storm began`,
          );
        }
        return (await this.probe()).status === 429;
      },
      {
        timeoutMs: EFFECTIVE_TIMEOUT_MS,
        intervalMs: 200,
        describe: `kreload's writes in ${namespace} to be rejected with 429`,
      },
    );
  }

  /** Lets go of the seat, deletes the objects, returns once a probe write is not rejected. */
  async end(): Promise<void> {
    const { name } = this.#deps;
    clearInterval(this.#trickle);
    this.#holder?.destroy();
    this.#holder = undefined;
    await this.#flowControl.deleteFlowSchema({ name }).catch(() => undefined);
    await this.#flowControl.deletePriorityLevelConfiguration({ name }).catch(() => undefined);
    await pollUntil(async () => (await this.probe()).status !== 429, {
      timeoutMs: EFFECTIVE_TIMEOUT_MS,
      intervalMs: 200,
      describe: "kreload's writes to be accepted again",
    });
  }

  /** The holder may create ConfigMaps in the throttled namespace (authorized before its body). */
  async #installHolder(): Promise<void> {
    const { admin, namespace, kreload, name } = this.#deps;
    const core = admin.makeApiClient(CoreV1Api);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await core
      .createNamespacedServiceAccount({
        namespace: kreload.namespace,
        body: { metadata: { name: APF_HOLDER } },
      })
      .catch((error: unknown) => {
        if ((error as { code?: number }).code !== 409) throw error;
      });
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name: APF_HOLDER, namespace: kreload.namespace }],
      },
    });
  }

  /** The holder's POST: headers and the start of a body, then a space a second, never the rest. */
  async #holdSeat(): Promise<void> {
    const token = await this.#deps.mintHolderToken();
    const { req, answer } = send(await this.#endpoint(), token, {
      method: 'POST',
      path: `/api/v1/namespaces/${this.#deps.namespace}/configmaps?dryRun=All`,
      contentType: 'application/json',
      contentLength: HOLDER_BODY_BYTES,
    });
    answer.then(
      (early) => {
        if (this.#holder === req) this.#holderAnswered = early.status;
      },
      () => undefined, // destroyed by end()
    );
    req.write('{');
    this.#holder = req;
    this.#trickle = setInterval(() => req.write(' '), HOLDER_TRICKLE_MS);
  }
}
