/** Identifiers, card numbers and other generated values. */
import { randomBytes, randomInt } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** e.g. newId('crd') → crd_8fK2mQx9Lw3pTz4R */
export function newId(prefix: string, length = 16): string {
  return `${prefix}_${randomChars(length)}`;
}

/** Letters and digits without look-alikes. */
export function randomChars(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += ALPHANUMERIC[b % ALPHANUMERIC.length];
  return out;
}

export function randomDigits(n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += String(randomInt(10));
  return out;
}

/** The Luhn check digit for a number given without it. */
export function luhnCheckDigit(partial: string): number {
  let sum = 0;
  for (let i = 0; i < partial.length; i++) {
    let d = Number(partial[partial.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** A 16-digit Luhn-valid PAN on the given 6-digit BIN. */
export function generatePan(bin: string): string {
  const partial = bin + randomDigits(15 - bin.length);
  return partial + String(luhnCheckDigit(partial));
}

export function maskPan(pan: string): string {
  return `${pan.slice(0, 6)}******${pan.slice(-4)}`;
}

/** An ICCID: 89 (telecom) + 17 digits + Luhn digit. */
export function generateIccid(): string {
  const partial = '89' + randomDigits(17);
  return partial + String(luhnCheckDigit(partial));
}
