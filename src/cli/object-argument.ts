import { checkDnsLabel, checkDnsSubdomain } from '../config/k8s-names.ts';

/**
 * The `<kind>/<name>` argument of `kreload explain` and `kreload history`, split and checked. The
 * name must be a valid object name before it goes into a URL: a second slash would address a
 * subresource instead (`deployments/web/status` answers with the Deployment `web`).
 */
export function splitKindAndName(text: string): { word: string; name: string } | string {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) return `expected <kind>/<name>, got "${text}"`;
  const name = text.slice(slash + 1);
  const problem = checkDnsSubdomain(name);
  if (problem !== undefined) return `name "${name}" is not a valid object name: it ${problem}`;
  return { word: text.slice(0, slash), name };
}

/** A `-n` value: a namespace name, for the same reason as the object name. */
export function namespaceProblem(namespace: string | undefined): string | undefined {
  if (namespace === undefined) return undefined;
  const problem = checkDnsLabel(namespace);
  return problem === undefined
    ? undefined
    : `namespace "${namespace}" is not a valid namespace: it ${problem}`;
}
