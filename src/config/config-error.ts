/** Raised for any invalid setting; start-up prints its message (one line naming the field) and exits. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
