/** Env-var name collisions (§6.3): tracked sources whose names sanitise to one variable. */
import type { SourceKey } from '../../core/types.ts';
import type { EnvVarCollision, TrackedSource } from './model.ts';

export function envVarOf(source: Pick<TrackedSource, 'envVar'>): string {
  return source.envVar;
}

/** Groups of two or more tracked keys sharing one env var in one selected container. */
export function findCollisions(tracked: readonly TrackedSource[]): EnvVarCollision[] {
  // Planned at every reconcile over hundreds of sources that rarely collide: first find whether any
  // env var is shared at all, then group only those.
  const seen = new Set<string>();
  const shared = new Set<string>();
  for (const source of tracked) {
    if (source.container === undefined) continue;
    const envVar = envVarOf(source);
    if (seen.has(envVar)) shared.add(envVar);
    else seen.add(envVar);
  }
  if (shared.size === 0) return [];
  const groups = new Map<string, { envVar: string; container: string; keys: SourceKey[] }>();
  for (const source of tracked) {
    if (source.container === undefined) continue;
    const envVar = envVarOf(source);
    if (!shared.has(envVar)) continue;
    // Container names are DNS labels and env var names [A-Z0-9_]: a space separates them.
    const id = `${source.container} ${envVar}`;
    const group = groups.get(id) ?? { envVar, container: source.container, keys: [] };
    group.keys.push(source.key);
    groups.set(id, group);
  }
  return [...groups.values()].filter((group) => group.keys.length > 1);
}
