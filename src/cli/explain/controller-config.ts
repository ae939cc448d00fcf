/**
 * The running controller's effective options, read from its Deployment (`--from ns/name`): the
 * container's args and literal env, parsed by the controller's own parseOptions. Env values from a
 * field reference are filled from what the Deployment says about its pods; anything else that needs
 * the pod (a Secret, another field) cannot be known here and is reported.
 */
import type { Options } from '../../config/parse-options.ts';
import { parseOptions } from '../../config/parse-options.ts';
import type { JsonObject } from '../../core/json.ts';
import { objectsAt, stringAt } from '../../core/json.ts';

export interface ControllerCommandLine {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Env vars whose value only the pod knows. */
  readonly unresolved: readonly string[];
}

/** The container that runs kreload: the one named `kreload`, else the first. */
function controllerContainer(deployment: JsonObject): JsonObject | undefined {
  const containers = objectsAt(deployment, ['spec', 'template', 'spec', 'containers']);
  return containers.find((c) => stringAt(c, ['name']) === 'kreload') ?? containers[0];
}

/** What a field reference resolves to for any pod of the Deployment; undefined: pod-specific. */
function fieldValue(deployment: JsonObject, fieldPath: string | undefined): string | undefined {
  if (fieldPath === 'metadata.namespace') return stringAt(deployment, ['metadata', 'namespace']);
  // The pod's name only matters as the leader-election identity, which explain never uses.
  if (fieldPath === 'metadata.name')
    return `${stringAt(deployment, ['metadata', 'name']) ?? 'kreload'}-pod`;
  return undefined;
}

export function controllerCommandLine(deployment: JsonObject): ControllerCommandLine {
  const container = controllerContainer(deployment);
  const args = (Array.isArray(container?.args) ? container.args : []).filter(
    (arg): arg is string => typeof arg === 'string',
  );
  const env: Record<string, string> = {};
  const unresolved: string[] = [];
  for (const entry of objectsAt(container, ['env'])) {
    const name = stringAt(entry, ['name']);
    if (name === undefined) continue;
    const value =
      stringAt(entry, ['value']) ??
      fieldValue(deployment, stringAt(entry, ['valueFrom', 'fieldRef', 'fieldPath']));
    if (value === undefined) {
      if (entry.valueFrom !== undefined) unresolved.push(name);
    } else {
      env[name] = value;
    }
  }
  return { args, env, unresolved };
}

export async function optionsOfCommandLine(commandLine: ControllerCommandLine): Promise<Options> {
  return parseOptions(commandLine.args, commandLine.env);
}
