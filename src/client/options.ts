/** The typed client's constructor options (client.ts), and where it tells of the provider's deprecations by default. */
import type { Client } from '@temporalio/client';
import type { CodecKeys } from '../codec/payload-codec';
import type { PinPublicKey } from '../codec/card-secrets';
import type { CardActionKey } from '../codec/card-capability';

/** The CardIssuingClient constructor's options; connectCardIssuingClient builds them from ConnectOptions. */
export interface CardIssuingClientOptions {
  /** A client built with createDataConverter(codec); the caller closes its connection. */
  client: Client;
  /** The workers' main task queue (TEMPORAL_TASK_QUEUE, `card-issuing` unless configured otherwise). */
  taskQueue: string;
  /** The payload codec keys our workers use. */
  codec: CodecKeys;
  /** The workers' PIN public key (PIN_SEAL_PUBLIC_KEY): issueCard with a PIN and setPin seal the PIN to it before sending. */
  pinKey?: PinPublicKey;
  /** This service's card action signing key (CARD_ACTION_SIGNING_KEY): reveal, setPin, updateContact, freeze, unfreeze and delete sign a capability with it. */
  cardActionKey?: CardActionKey;
  /** Where the provider's deprecations are told; default: a Node DeprecationWarning. */
  onDeprecation?: (message: string) => void;
}

/** A Node DeprecationWarning: the default of `onDeprecation`. */
export const emitDeprecation = (message: string) => process.emitWarning(message, { type: 'DeprecationWarning', code: 'PROVIDER_DEPRECATION' });
