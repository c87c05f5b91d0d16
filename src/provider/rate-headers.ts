/** The provider's rate headers (X-RateLimit-*), read for the mapping (errors.ts), the transport and the budget. */

export type HeaderBag = Record<string, string | string[] | undefined>;

/** X-RateLimit-Reset is epoch milliseconds. */
export function parseResetHeader(headers: HeaderBag): number | undefined {
  return numericHeader(headers, 'x-ratelimit-reset');
}

export function numericHeader(headers: HeaderBag, name: string): number | undefined {
  const raw = headers[name] ?? headers[name.toLowerCase()];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}
