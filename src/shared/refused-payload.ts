/**
 * A payload a worker with a real payload key refused because it was not encrypted with a key of
 * ours (codec/payload-codec.ts): anyone with access to the namespace can send one (`temporal workflow
 * signal` with plain JSON), and only the bridge and our clients hold the key. Workflows drop a signal
 * that carries it (trustedSignal) and a start input that is it fails validation, so a stranger can
 * neither report a payout paid nor jam a card. Pure: workflow code imports it.
 */
export const REFUSED_PAYLOAD = { refusedUnencryptedPayload: true } as const;

export function isRefusedPayload(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<string, unknown>).refusedUnencryptedPayload === true;
}
