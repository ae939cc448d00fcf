/**
 * Invalid configuration (§12.6): every problem found, each `<flag|env>: <problem>`. The process prints
 * each as `kreload: invalid configuration: <problem>` and exits 2.
 */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[], options?: ErrorOptions) {
    super(`invalid configuration: ${problems.join('; ')}`, options);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The stderr lines of §12.6, one per problem. */
export function formatConfigProblems(error: ConfigError): string[] {
  return error.problems.map((problem) => `kreload: invalid configuration: ${problem}`);
}
