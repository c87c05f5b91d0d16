/**
 * The payload key the recorded histories were encrypted with. Not a secret: it protects only
 * these test histories, and replay needs it to decode their inputs.
 */
export const REPLAY_CODEC_ENV = {
  PAYLOAD_CODEC_KEY: Buffer.alloc(32, 42).toString('base64'),
  PAYLOAD_CODEC_KEY_ID: 'replay',
};
