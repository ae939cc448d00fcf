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

/**
 * The object the positional arguments name, in either of kubectl's forms: `<kind>/<name>` or
 * `<kind> <name>`; `rest` are the arguments left over (a usage error for the caller).
 */
export function objectArgument(
  positionals: readonly string[],
): { word: string; name: string; rest: readonly string[] } | string {
  const [first, second, ...others] = positionals;
  if (first === undefined) return 'expected <kind>/<name> or <kind> <name>';
  if (first.includes('/')) {
    const split = splitKindAndName(first);
    return typeof split === 'string' ? split : { ...split, rest: positionals.slice(1) };
  }
  if (second === undefined) return `expected <kind>/<name> or <kind> <name>, got only "${first}"`;
  const split = splitKindAndName(`${first}/${second}`);
  return typeof split === 'string' ? split : { ...split, rest: others };
}

/** A `-n` value: a namespace name, for the same reason as the object name. */
export function namespaceProblem(namespace: string | undefined): string | undefined {
  if (namespace === undefined) return undefined;
  const problem = checkDnsLabel(namespace);
  return problem === undefined
    ? undefined
    : `namespace "${namespace}" is not a valid namespace: it ${problem}`;
}
