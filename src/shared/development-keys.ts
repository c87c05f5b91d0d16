/**
 * The public development keys every process must tell apart from real ones, in one place: the
 * configuration (src/config.ts) takes them when a key is unset in development, and a client's
 * optionsFromEnv refuses them outside it. Public (they are in this file), so nothing sealed to or
 * signed with them is secret from anyone. Plain strings: the client package and workflow code may import this.
 */

/** The workers' PIN private key of development (no PIN_SEAL_PRIVATE_KEY nor PIN_SEAL_PUBLIC_KEY): 32 bytes of 0x0d. */
export const DEVELOPMENT_PIN_PRIVATE_KEY = 'DQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0=';
