/**
 * The payload converter of workers and the workflow bundle (`payloadConverterPath`): Temporal's
 * default one, whose JSON values decoded from a payload the worker's codec found MAC-verified are
 * marked as ours (shared/signal-origin.ts). Runs in the workflow sandbox: no Node built-ins.
 */
import { BinaryPayloadConverter, CompositePayloadConverter, JsonPayloadConverter, UndefinedPayloadConverter, type Payload } from '@temporalio/common';
import { markOurs, saysOurs } from '../shared/signal-origin';

class OriginAwareJsonConverter extends JsonPayloadConverter {
  override fromPayload<T>(payload: Payload): T {
    const value = super.fromPayload<T>(payload);
    return saysOurs(payload.metadata) ? markOurs(value) : value;
  }
}

export const payloadConverter = new CompositePayloadConverter(new UndefinedPayloadConverter(), new BinaryPayloadConverter(), new OriginAwareJsonConverter());
