/**
 * The failure converter for workers, clients and the workflow bundle (`failureConverterPath`).
 *
 * With `encodeCommonAttributes`, a failure's message and stack trace travel inside an encoded
 * payload instead of as plain Failure fields, so the payload codec encrypts them too: an error
 * such as "card 4111… declined" must not land in history in plaintext.
 *
 * This file is bundled into the workflow sandbox: it must import nothing but `@temporalio/common`.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
