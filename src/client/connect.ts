/**
 * Connecting a CardIssuingClient from configuration the caller passes in (issue 30): the library
 * reads no environment variable, never exits the process and never logs a key. A bad option is a
 * CardIssuingError ValidationFailed naming the field and the rule, thrown before any connection.
 */
import { Client, Connection, type ClientInterceptors, type TLSConfig } from '@temporalio/client';
import { createDataConverter, type CodecKeys } from '../codec/payload-codec';
import type { PinPublicKey } from '../codec/card-secrets';
import type { CardActionKey } from '../codec/card-capability';
import { isKey, KEY_ID_PATTERN } from '../codec/keyring';
import { KEY_ID_RULE } from '../shared/key-id';
import { CardIssuingClient } from './client';
import { CardIssuingError } from './errors';
import { clientInterceptors } from '../temporal/client-interceptors';

/** How connectCardIssuingClient reaches our workers: Temporal's address and credentials, our queue, and the keys the calls need. */
export interface ConnectOptions {
  /** The Temporal frontend, `host:port`. */
  address: string;
  /** Default `default`. */
  namespace?: string;
  /** The main task queue our workers poll (their TEMPORAL_TASK_QUEUE). */
  taskQueue: string;
  /** The payload codec keys our workers use: the current one by id, and retired ones to read older histories. */
  codec: CodecKeys;
  /** The workers' PIN public key (PIN_SEAL_PUBLIC_KEY, PIN_SEAL_KEY_ID): needed only to send a PIN (issueCard's `pin`, setPin). */
  pinKey?: PinPublicKey;
  /**
   * This service's card action signing key (CARD_ACTION_SIGNING_KEY, CARD_ACTION_KEY_ID): needed only to
   * act on a card (reveal, PIN, contact, freeze, unfreeze, delete). Its public key must be on the
   * workers' CARD_ACTION_TRUSTED_KEYS; holding the payload key alone grants no card action.
   */
  cardActionKey?: CardActionKey;
  /** TLS to the frontend: true for the system's CAs, or certificates (mTLS, a private CA, a server name). */
  tls?: boolean | TLSConfig;
  /** A Temporal Cloud API key. */
  apiKey?: string;
  /** Where the provider's deprecations are told; default: a Node DeprecationWarning. */
  onDeprecation?: (message: string) => void;
  /** Client interceptors (tracing). */
  interceptors?: ClientInterceptors;
}

/** Field errors of connect options, each naming the rule. */
export function connectOptionsErrors(opts: Partial<ConnectOptions> | undefined): Record<string, string> {
  const errors: Record<string, string> = {};
  if (typeof opts?.address !== 'string' || !/^[^\s:]+:\d{1,5}$/.test(opts.address)) errors.address = 'must be host:port';
  if (opts?.namespace !== undefined && (typeof opts.namespace !== 'string' || opts.namespace.length === 0)) errors.namespace = 'must be a non-empty string';
  if (typeof opts?.taskQueue !== 'string' || opts.taskQueue.length === 0) errors.taskQueue = 'must be a non-empty string';
  Object.assign(errors, keyringErrors('codec', opts?.codec));
  if (opts?.pinKey !== undefined) Object.assign(errors, pinKeyErrors(opts.pinKey));
  if (opts?.cardActionKey !== undefined) Object.assign(errors, cardActionKeyErrors(opts.cardActionKey));
  return errors;
}

function cardActionKeyErrors(key: Partial<CardActionKey>): Record<string, string> {
  const errors: Record<string, string> = {};
  if (typeof key?.keyId !== 'string' || !KEY_ID_PATTERN.test(key.keyId)) errors['cardActionKey.keyId'] = KEY_ID_RULE;
  if (!isKey(key?.privateKey)) errors['cardActionKey.privateKey'] = 'must be an Ed25519 private key (its 32-byte seed) encoded in base64';
  if (key?.subject !== undefined && (typeof key.subject !== 'string' || !/^[A-Za-z0-9_.@:/-]{1,128}$/.test(key.subject))) errors['cardActionKey.subject'] = 'must be 1-128 characters of [A-Za-z0-9_.@:/-]';
  return errors;
}

function pinKeyErrors(key: Partial<PinPublicKey>): Record<string, string> {
  const errors: Record<string, string> = {};
  if (typeof key?.keyId !== 'string' || !KEY_ID_PATTERN.test(key.keyId)) errors['pinKey.keyId'] = KEY_ID_RULE;
  if (!isKey(key?.publicKey)) errors['pinKey.publicKey'] = 'must be an X25519 public key: 32 bytes encoded in base64';
  return errors;
}

function keyringErrors(field: string, keys: Partial<CodecKeys> | undefined): Record<string, string> {
  const errors: Record<string, string> = {};
  if (typeof keys?.keyId !== 'string' || !KEY_ID_PATTERN.test(keys.keyId)) errors[`${field}.keyId`] = 'must be 1-32 characters of [A-Za-z0-9_-]';
  if (!isKey(keys?.key)) errors[`${field}.key`] = 'must be 32 bytes encoded in base64';
  for (const [id, key] of Object.entries(keys?.previousKeys ?? {})) {
    if (!KEY_ID_PATTERN.test(id) || !isKey(key)) errors[`${field}.previousKeys.${id}`] = 'must be 32 bytes encoded in base64, under an id of 1-32 characters of [A-Za-z0-9_-]';
  }
  if (keys?.keyId !== undefined && keys.previousKeys && keys.keyId in keys.previousKeys) errors[`${field}.previousKeys.${keys.keyId}`] = 'must not name the current keyId';
  return errors;
}

/** 1.x's symmetric card-seal keys: 2.0 reveals to a one-time key, so an option left from 1.x is told, not obeyed. */
const RETIRED_SEAL_KEYS = 'sealKeys is retired and ignored (2.0): revealSensitive seals each reveal to a one-time key of its own; remove the option and delete the card-seal keys';
const emitRetired = (message: string) => process.emitWarning(message, { type: 'DeprecationWarning', code: 'CARD_ISSUING_RETIRED_OPTION' });

/** A client with its own connection (closed by `client.close()`). */
export async function connectCardIssuingClient(opts: ConnectOptions): Promise<CardIssuingClient> {
  const errors = connectOptionsErrors(opts);
  if (Object.keys(errors).length > 0) {
    const described = Object.entries(errors).map(([field, rule]) => `${field} ${rule}`).join('; ');
    throw new CardIssuingError({ type: 'ValidationFailed', message: `invalid client options: ${described}`, details: [{ errors }] });
  }
  // With the guard for a retry that outlives its connection (temporal/client-interceptors.ts): closing this client must not crash its host.
  const connection = await Connection.connect({ address: opts.address, tls: opts.tls, apiKey: opts.apiKey, interceptors: clientInterceptors() });
  const client = new Client({ connection, namespace: opts.namespace ?? 'default', dataConverter: createDataConverter(opts.codec), interceptors: opts.interceptors });
  if ('sealKeys' in opts) (opts.onDeprecation ?? emitRetired)(RETIRED_SEAL_KEYS);
  return new CardIssuingClient({ client, taskQueue: opts.taskQueue, codec: opts.codec, pinKey: opts.pinKey, cardActionKey: opts.cardActionKey, onDeprecation: opts.onDeprecation }, connection);
}

export { tlsFromFiles } from '../temporal/tls';
