/** Raised for any invalid setting; start-up prints its message (one line naming the field) and exits. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** One ConfigError for every problem found: the problem itself when there is one, else a count and a line each. */
export function configErrorOf(problems: readonly string[]): ConfigError {
  if (problems.length === 1) return new ConfigError(problems[0]!);
  return new ConfigError(`${problems.length} settings are invalid:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
}
