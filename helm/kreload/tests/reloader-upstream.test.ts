// Stakater Reloader's own default values files, verbatim, at every version line kreload accepts
// (reloader-upstream/README.md): each renders, never with Reloader's image, and passes the
// controller's own option checks with the args and env the Deployment would start it with.
// e2e/specs/helm.e2e.test.ts applies the same renders to a real API server.
import { beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../../src/config/parse-options.ts';
import {
  HELM_BUILD_TIMEOUT_MS,
  RELOADER_UPSTREAM_FILES,
  type Rendered,
  locateHelm,
  parseObjects,
  Rendered as RenderedObjects,
  renderNotes,
  templateChart,
} from './chart-harness.ts';

const upstream = (name: (typeof RELOADER_UPSTREAM_FILES)[number]): string =>
  `tests/reloader-upstream/${name}.yaml`;

const PR_1206 = 'values-pr1206-chart-2.2.16';
const V2 = 'values-v2-chart-reloader-v2-2.0.0';

/** The options the rendered container would start kreload with (literal env only). */
async function controllerOptionsOf(rendered: Rendered): ReturnType<typeof parseOptions> {
  const container = rendered.container();
  const env = Object.fromEntries(
    (container.env ?? []).map((variable) => [variable.name, variable.value ?? 'from-the-pod']),
  );
  return parseOptions(container.args ?? [], env);
}

describe("Reloader's default values at each version line", () => {
  let helm = '';
  const render = async (
    files: readonly string[],
    values?: Record<string, unknown>,
  ): Promise<{ objects: Rendered; stdout: string }> => {
    const result = await templateChart(helm, { files, ...(values ? { values } : {}) });
    expect(result.stderr).toBe('');
    expect(result.ok).toBe(true);
    return { objects: new RenderedObjects(parseObjects(result.stdout)), stdout: result.stdout };
  };

  beforeAll(async () => {
    helm = await locateHelm();
  }, HELM_BUILD_TIMEOUT_MS);

  it.each(RELOADER_UPSTREAM_FILES)(
    "%s renders with kreload's image and says which value to change",
    async (name) => {
      const { objects, stdout } = await render([upstream(name)]);
      expect(objects.container().image).toBe('kreload:0.1.0');
      expect(stdout).toMatch(
        /# image\.repository names Stakater Reloader's image ghcr\.io\/stakater\/reloader:\S+, which cannot run kreload's flags: kreload:0\.1\.0 runs instead\./,
      );
    },
  );

  it.each(RELOADER_UPSTREAM_FILES)(
    '%s starts a controller whose options pass its checks',
    async (name) => {
      const { objects } = await render([upstream(name)], {
        reloader: { enableHA: true, deployment: { replicas: 2 } },
      });
      const options = await controllerOptionsOf(objects);
      expect(options.leaderElection).toMatchObject({
        enabled: true,
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      });
    },
  );

  it("PR #1206's leader-election timings reach kreload's elector", async () => {
    const { objects } = await render([upstream(PR_1206)], {
      reloader: {
        enableHA: true,
        leaderElection: { leaseDuration: '30s', renewDeadline: '20s', retryPeriod: '4s' },
      },
    });
    expect(objects.args()).toEqual(
      expect.arrayContaining([
        '--leader-election-lease-duration=30s',
        '--leader-election-renew-deadline=20s',
        '--leader-election-retry-period=4s',
      ]),
    );
    expect((await controllerOptionsOf(objects)).leaderElection).toMatchObject({
      leaseDurationMs: 30_000,
      renewDeadlineMs: 20_000,
      retryPeriodMs: 4_000,
      releaseOnCancel: true,
    });
  });

  it('a fractional lease duration renders but the controller refuses it, as Reloader does', async () => {
    const { objects } = await render([upstream(PR_1206)], {
      reloader: {
        enableHA: true,
        leaderElection: { leaseDuration: '1500ms', renewDeadline: '1200ms', retryPeriod: '500ms' },
      },
    });
    await expect(controllerOptionsOf(objects)).rejects.toThrow(/not a whole number of seconds/);
  });

  it("the v2 chart's custom annotations become kreload's flags", async () => {
    const keys = {
      configmap_exclude: 'my.company.com/configmap-exclude',
      secret_exclude: 'my.company.com/secret-exclude',
      secretproviderclass: 'my.company.com/secretproviderclass',
      secretproviderclass_auto: 'my.company.com/secretproviderclass-auto',
      secretproviderclass_exclude: 'my.company.com/secretproviderclass-exclude',
    };
    const { objects } = await render([upstream(V2)], { reloader: { custom_annotations: keys } });
    expect((await controllerOptionsOf(objects)).annotationKeys).toMatchObject({
      configmapExclude: keys.configmap_exclude,
      secretExclude: keys.secret_exclude,
      secretProviderClassReload: keys.secretproviderclass,
      secretProviderClassAuto: keys.secretproviderclass_auto,
      secretProviderClassExclude: keys.secretproviderclass_exclude,
    });
  });

  it('enterprise.enabled is accepted and ignored, with a NOTES line', async () => {
    const values = {
      enterprise: { enabled: true },
      global: { consoleHost: 'console.example.com', gatewayHost: 'gw.example.com' },
    };
    const { objects } = await render([upstream(V2)], values);
    expect(objects.ofKind('Deployment')).toHaveLength(1);
    const notes = await renderNotes(helm, { files: [upstream(V2)], values });
    expect(notes).toContain('enterprise.enabled is ignored: kreload has no enterprise console');
  });
});

describe('values that name Reloader image another way', () => {
  let helm = '';
  beforeAll(async () => {
    helm = await locateHelm();
  }, HELM_BUILD_TIMEOUT_MS);

  it.each<[string, Record<string, unknown>, string, string]>([
    [
      'image.name under global.imageRegistry',
      { global: { imageRegistry: 'registry.example.com' }, image: { name: 'stakater/reloader' } },
      'registry.example.com/kreload:0.1.0',
      'image.name',
    ],
    [
      "the pre-1.3.1 layout's reloader.deployment.image.name",
      {
        reloader: {
          deployment: { image: { name: 'docker.io/stakater/reloader', tag: 'v1.0.0' } },
        },
      },
      'kreload:0.1.0',
      'reloader.deployment.image.name',
    ],
  ])('%s', async (_name, values, image, source) => {
    const result = await templateChart(helm, { values });
    expect(result.ok).toBe(true);
    const objects = new RenderedObjects(parseObjects(result.stdout));
    expect(objects.container().image).toBe(image);
    expect(result.stdout).toContain(`# ${source} names Stakater Reloader's image`);
  });

  it('leaves a kreload image alone', async () => {
    const result = await templateChart(helm, {
      values: { image: { repository: 'registry.example.com/stakater-mirror/kreload', tag: '1.0' } },
    });
    expect(result.stdout).toContain('image: "registry.example.com/stakater-mirror/kreload:1.0"');
    expect(result.stdout).not.toContain("Stakater Reloader's image");
  });
});

describe('global-only scoping values outside global mode', () => {
  let helm = '';
  beforeAll(async () => {
    helm = await locateHelm();
  }, HELM_BUILD_TIMEOUT_MS);

  it.each<[string, Record<string, unknown>, string]>([
    [
      'scoped',
      { namespaces: ['team-a'], ignoreNamespaces: 'kube-system', namespaceSelector: 'env=prod' },
      'reloader.ignoreNamespaces and reloader.namespaceSelector: honoured only when watching all namespaces, so ignored in scoped mode (reloader.namespaces), as in Reloader.',
    ],
    [
      'single-namespace',
      { watchGlobally: false, ignoreNamespaces: ['kube-system'] },
      'reloader.ignoreNamespaces: honoured only when watching all namespaces, so ignored in single-namespace mode (reloader.watchGlobally=false), as in Reloader.',
    ],
  ])('%s: dropped, and said in NOTES and above the args', async (_mode, reloader, sentence) => {
    const result = await templateChart(helm, { values: { reloader } });
    expect(result.ok).toBe(true);
    expect(result.stdout).toContain(`# ${sentence}`);
    const args = new RenderedObjects(parseObjects(result.stdout)).args();
    expect(args.filter((arg) => /^--namespace(s-to-ignore|-selector)=/.test(arg))).toEqual([]);
    expect(await renderNotes(helm, { values: { reloader } })).toContain(sentence);
  });

  it('says nothing in global mode', async () => {
    const reloader = { ignoreNamespaces: 'kube-system' };
    const result = await templateChart(helm, { values: { reloader } });
    expect(result.stdout).not.toContain('honoured only when watching all namespaces');
  });
});
