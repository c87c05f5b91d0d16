/** The one failure of configuration: its message is one line naming the variable and the rule. */
export class ConfigError extends Error {
  readonly type = 'ConfigError';
}
