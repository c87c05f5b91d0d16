import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { temporal } from '@temporalio/proto';

/**
 * The CLI's JSON history as a History message. SDK 1.24's own historyFromJSON fails here ("type
 * must be a Type"): @temporalio/common and @temporalio/proto each carry their own copy of
 * protobufjs. The JSON reader of the copy that defined the History type reads it.
 */
const load = createRequire(__filename);

export function loadHistory(file: string): temporal.api.history.v1.History {
  const fromProto = { paths: [load.resolve('@temporalio/proto')] };
  const { fromJson } = load(load.resolve('protobufjs/ext/protojson', fromProto)) as { fromJson(type: unknown, json: unknown, options: unknown): temporal.api.history.v1.History };
  const { patchProtobufRoot } = load('@temporalio/proto/lib/patch-protobuf-root') as { patchProtobufRoot(root: unknown): { lookupType(name: string): unknown } };
  const historyType = patchProtobufRoot(load('@temporalio/proto')).lookupType('temporal.api.history.v1.History');
  return fromJson(historyType, JSON.parse(readFileSync(file, 'utf8')), { ignoreUnknownFields: true });
}
