/** `STAKATER_*` env-var names (§4.3), as Reloader's `ConvertToEnvVarName` builds them. */
import type { SourceKey, SourceType } from './types.ts';

const ENV_VAR_PREFIX = 'STAKATER_';

function isKept(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39);
}

/**
 * Upper-cases ASCII letters, keeps `A–Z0–9`, and turns each run of other characters into one `_` when the
 * character before the run was kept. Walking UTF-16 code units gives the same result as walking UTF-8 bytes
 * because every non-ASCII unit is dropped either way.
 */
export function sanitiseEnvVarName(text: string): string {
  // Planned for every tracked source at every reconcile: code units, no string per character.
  let result = '';
  let previousKept = false;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    const upper = unit >= 0x61 && unit <= 0x7a ? unit - 0x20 : unit;
    if (isKept(upper)) {
      result += String.fromCharCode(upper);
      previousKept = true;
    } else {
      if (previousKept) result += '_';
      previousKept = false;
    }
  }
  return result;
}

export function envVarName(type: SourceType, sourceName: string): string {
  return `${ENV_VAR_PREFIX}${sanitiseEnvVarName(sourceName)}_${type}`;
}

/** How many names an `EnvVarNames` keeps before it starts over. */
const ENV_VAR_NAMES_KEPT = 20_000;

/**
 * `envVarName`, built once per source: a reconcile names every source it tracks, and a workload
 * bound to hundreds of sources is planned at every change of any of them. Looked up by source key
 * (`key` is `type`/`name`'s key): the planner passes the same key strings at every reconcile.
 */
export class EnvVarNames {
  readonly #names = new Map<SourceKey, string>();

  of(key: SourceKey, type: SourceType, sourceName: string): string {
    let name = this.#names.get(key);
    if (name === undefined) {
      if (this.#names.size >= ENV_VAR_NAMES_KEPT) this.#names.clear();
      name = envVarName(type, sourceName);
      this.#names.set(key, name);
    }
    return name;
  }
}
