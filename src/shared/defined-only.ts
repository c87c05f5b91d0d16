/** The object without its undefined fields: for output and for inputs that must not carry `undefined`. */
export function definedOnly<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}
