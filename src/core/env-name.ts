/** `STAKATER_*` env-var names (§4.3), as Reloader's `ConvertToEnvVarName` builds them. */
import type { SourceType } from './types.ts';

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
