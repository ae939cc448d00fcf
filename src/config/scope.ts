/** Namespace mode resolution (§11): scoped, single namespace, or global, in Reloader's precedence. */
import type { ConfigWarning } from './config-warning.ts';

export type ScopeMode = 'scoped' | 'single' | 'global';

export interface Scope {
  readonly mode: ScopeMode;
  /** Watched namespaces: the `--namespaces` list (scoped), `[KUBERNETES_NAMESPACE]` (single), `[]` (global). */
  readonly namespaces: readonly string[];
  /** Excluded namespaces; global mode only, `[]` otherwise. */
  readonly ignoreNamespaces: readonly string[];
  /** Normalised namespace label selector; global mode only, `''` means none. */
  readonly namespaceSelector: string;
}

export interface ScopeInput {
  readonly namespaces: readonly string[];
  readonly namespacesToIgnore: readonly string[];
  readonly namespaceSelector: string;
  readonly kubernetesNamespace: string | undefined;
  /** Flag or env var that supplied each filter, for the warnings. */
  readonly subjects: {
    readonly namespaces: string;
    readonly namespacesToIgnore: string;
    readonly namespaceSelector: string;
  };
}

export function resolveScope(input: ScopeInput): { scope: Scope; warnings: ConfigWarning[] } {
  const narrowed = narrowedScope(input);
  if (narrowed === undefined) {
    return {
      scope: {
        mode: 'global',
        namespaces: [],
        ignoreNamespaces: input.namespacesToIgnore,
        namespaceSelector: input.namespaceSelector,
      },
      warnings: [],
    };
  }
  const warnings: ConfigWarning[] = [];
  const reason = `ignored because ${narrowed.selectedBy} selects ${narrowed.description}`;
  if (input.namespacesToIgnore.length > 0) {
    warnings.push({ level: 'warn', subject: input.subjects.namespacesToIgnore, message: reason });
  }
  if (input.namespaceSelector !== '') {
    warnings.push({ level: 'warn', subject: input.subjects.namespaceSelector, message: reason });
  }
  return {
    scope: {
      mode: narrowed.mode,
      namespaces: narrowed.namespaces,
      ignoreNamespaces: [],
      namespaceSelector: '',
    },
    warnings,
  };
}

function narrowedScope(
  input: ScopeInput,
):
  | { mode: ScopeMode; namespaces: readonly string[]; selectedBy: string; description: string }
  | undefined {
  if (input.namespaces.length > 0) {
    return {
      mode: 'scoped',
      namespaces: input.namespaces,
      selectedBy: input.subjects.namespaces,
      description: 'scoped mode',
    };
  }
  if (input.kubernetesNamespace !== undefined && input.kubernetesNamespace !== '') {
    return {
      mode: 'single',
      namespaces: [input.kubernetesNamespace],
      selectedBy: 'KUBERNETES_NAMESPACE',
      description: 'single-namespace mode',
    };
  }
  return undefined;
}

/**
 * Why kreload does not act on workloads in `namespace`, or undefined when it does: outside the
 * watched list (scoped, single), ignored, or not selected by the namespace selector (global).
 */
export function namespaceRefusal(
  scope: Scope,
  namespace: string,
  isSelected: (namespace: string) => boolean,
): string | undefined {
  if (scope.mode !== 'global') {
    return scope.namespaces.includes(namespace)
      ? undefined
      : `namespace ${namespace} is not one kreload watches`;
  }
  if (scope.ignoreNamespaces.includes(namespace)) {
    return `namespace ${namespace} is ignored (--namespaces-to-ignore)`;
  }
  if (!isSelected(namespace))
    return `namespace ${namespace} is not selected (--namespace-selector)`;
  return undefined;
}
