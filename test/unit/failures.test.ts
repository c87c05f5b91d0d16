/** The one module of failure types (src/shared/failures.ts): pure, no I/O. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { failWith } from '../../src/workflows/lib/provider';
import {
  ANY_FLOW_FAILURES,
  FAILURE_TYPES,
  FLOW_FAILURES,
  FLOW_FAILURE_TYPES,
  FailureType,
  PROVIDER_ERROR_CODES,
  PROVIDER_ERROR_TYPES,
  codeMeaning,
  isFailureType,
  shortfallOf,
  type FlowFailureType,
} from '../../src/shared/failures';

describe('failure types', () => {
  it('declares each type once, and names each by itself', () => {
    expect(new Set(FAILURE_TYPES).size).toBe(FAILURE_TYPES.length);
    for (const t of FAILURE_TYPES) expect(FailureType[t]).toBe(t);
    expect(Object.keys(FailureType).sort()).toEqual([...FAILURE_TYPES].sort());
  });

  it('knows its own types and nothing else', () => {
    expect(isFailureType('ValidationFailed')).toBe(true);
    expect(isFailureType('EsimRefunded')).toBe(true);
    // What Temporal names a plain Error an activity threw: not ours to re-throw under our name.
    expect(isFailureType('Error')).toBe(false);
    expect(isFailureType('validationfailed')).toBe(false);
    expect(isFailureType(undefined)).toBe(false);
  });

  it('failWith takes only declared types (checked by tsc over test/)', () => {
    type FailWithType = Parameters<typeof failWith>[0];
    const ok: FailWithType = 'CardProvisioningFailed';
    // @ts-expect-error a misspelt type does not compile
    const wrong: FailWithType = 'CardProvisionFailed';
    expect([ok, wrong]).toHaveLength(2);
  });
});

describe('the provider error codes', () => {
  it('map each code to a provider error type and a refusal or server status', () => {
    for (const [code, meaning] of Object.entries(PROVIDER_ERROR_CODES)) {
      expect([code, PROVIDER_ERROR_TYPES.includes(meaning.type)]).toEqual([code, true]);
      expect(meaning.status).toBeGreaterThanOrEqual(400);
      expect(meaning.status).toBeLessThan(600);
      expect(meaning.plain).not.toMatch(/^[A-Z_]+$/);
    }
  });

  it('a few codes, as the spec states their status', () => {
    expect(codeMeaning('INVALID_SIGNATURE')).toMatchObject({ status: 403, type: 'InvalidSignature' });
    expect(codeMeaning('IP_NOT_WHITELISTED')).toMatchObject({ status: 403, type: 'IpNotWhitelisted' });
    expect(codeMeaning('NONCE_REUSED')).toMatchObject({ status: 409, type: 'NonceReused' });
    expect(codeMeaning('IDEMPOTENCY_CONFLICT')).toMatchObject({ status: 409, type: 'IdempotencyConflict' });
    expect(codeMeaning('RATE_LIMITED')).toMatchObject({ status: 429, type: 'RateLimited' });
  });

  it('an unknown word, or one of Object.prototype, is no code', () => {
    expect(codeMeaning('SOMETHING_NEW')).toBeUndefined();
    expect(codeMeaning('toString')).toBeUndefined();
    expect(codeMeaning('constructor')).toBeUndefined();
  });
});

describe('what each workflow may end with', () => {
  it('has a list for every workflow the worker registers (bar the internal entity workflow)', () => {
    const index = readFileSync(join(__dirname, '../../src/workflows/index.ts'), 'utf8');
    // `export { a }` registers a; `export { a as 'b-c' }` registers b-c.
    const registered = [...index.matchAll(/export \{([^}]+)\}/g)].flatMap((m) => m[1].split(',').map((s) => s.trim().split(/\s+as\s+/).at(-1)!.replace(/'/g, '')));
    expect(registered).toContain('issueCard');
    expect(Object.keys(FLOW_FAILURES).sort()).toEqual(registered.filter((w) => w !== 'providerEntity').sort());
  });

  it('names every type workflow code uses (FailureType.X in src/workflows) in some flow\'s list', () => {
    const dir = join(__dirname, '../../src/workflows');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const named = new Set(files.flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/\bFailureType\.(\w+)/g)].map((m) => m[1])));
    expect(named.size).toBeGreaterThan(5);
    const listed = new Set<string>(Object.values(FLOW_FAILURES).flat());
    expect([...named].filter((t) => !listed.has(t))).toEqual([]);
    // And every type only a flow names is named by some flow.
    expect(FLOW_FAILURE_TYPES.filter((t) => !named.has(t))).toEqual([]);
  });

  it('lists only declared types, and says what the caller must handle', () => {
    for (const list of [...Object.values(FLOW_FAILURES), ANY_FLOW_FAILURES]) for (const t of list) expect(isFailureType(t)).toBe(true);
    expect(FLOW_FAILURES.issueCard).toContain('CardProvisioningFailed');
    expect(FLOW_FAILURES.purchaseEsim).toContain('EsimRefunded');
    expect(FLOW_FAILURES.fundCard).toContain('InsufficientFunds');
    // A 429 is waited out, never the end of a flow.
    expect(ANY_FLOW_FAILURES).not.toContain('RateLimited');
    const reason: FlowFailureType<'trackPayout'> = 'PayoutTrackingTimedOut';
    // @ts-expect-error trackPayout never refunds an eSIM
    const notThere: FlowFailureType<'trackPayout'> = 'EsimRefunded';
    expect([reason, notThere]).toHaveLength(2);
  });
});

describe('shortfallOf', () => {
  it('reads the cents the wallet missed, when the wording says', () => {
    expect(shortfallOf('INSUFFICIENT_FUNDS: short by 1234 cents')).toBe(1234);
    expect(shortfallOf('Insufficient wallet balance')).toBeUndefined();
    expect(shortfallOf(undefined)).toBeUndefined();
  });
});
