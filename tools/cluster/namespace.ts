/**
 * What an operator does once per namespace on a cluster, through the API: register the
 * namespace and add our search attributes (src/shared/search-attributes.ts) with the operator
 * service, then wait until the frontend serves both.
 */
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../src/shared/search-attributes';

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

/**
 * Registers `namespace` (when absent) and our Keyword search attributes on it; resolves the attributes
 * the server lists. `apiKey`: a server that authorizes calls (tools/temporal-authz) takes an admin's token, in plaintext on loopback.
 */
export async function prepareNamespace(address: string, namespace: string, retentionDays = 1, { apiKey }: { apiKey?: string } = {}): Promise<string[]> {
  const connection = await Connection.connect({ address, ...(apiKey ? { apiKey, tls: false } : {}) });
  try {
    const exists = await connection.workflowService.describeNamespace({ namespace }).then(() => true, () => false);
    if (!exists) {
      await connection.workflowService.registerNamespace({
        namespace,
        description: 'card-issuing cluster smoke',
        workflowExecutionRetentionPeriod: msToTs(retentionDays * 24 * 3600 * 1000),
      });
    }
    // Only those it lacks (a namespace from an earlier release has some): the server refuses the whole
    // request when one name exists already. Every attribute of SEARCH_ATTRIBUTES is a Keyword.
    const has = Object.keys((await retry(() => connection.operatorService.listSearchAttributes({ namespace }))).customAttributes ?? {});
    const searchAttributes = Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).filter((name) => !has.includes(name)).map((name) => [name, KEYWORD]));
    if (Object.keys(searchAttributes).length > 0) await retry(() => connection.operatorService.addSearchAttributes({ namespace, searchAttributes }).catch(ignoreAlreadyExists));
    return await retry(async () => {
      await connection.workflowService.countWorkflowExecutions({ namespace, query: `CardId = 'none'` });
      const listed = await connection.operatorService.listSearchAttributes({ namespace });
      const names = Object.keys(listed.customAttributes ?? {}).filter((n) => n in SEARCH_ATTRIBUTES);
      if (names.length !== Object.keys(SEARCH_ATTRIBUTES).length) throw new Error(`search attributes not listed yet (${names.join(', ')})`);
      return names;
    });
  } finally {
    await connection.close();
  }
}

function ignoreAlreadyExists(err: Error & { code?: number }): unknown {
  // gRPC ALREADY_EXISTS (6): registered by an earlier run on the same database.
  if (err.code === 6 || /already exists/i.test(err.message)) return undefined;
  throw err;
}

/** The namespace registry and search-attribute cache catch up within seconds of a write. */
async function retry<T>(fn: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
