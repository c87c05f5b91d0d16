/**
 * literal() (shared/reconciliation.ts): a visibility string literal that no value can end early.
 * Temporal's query tokenizer is MySQL's: `''` and `\'` are a quote, `\\` a backslash. `readLiteral`
 * reads a literal as it does, and says where the literal ended.
 */
import { literal } from '../../src/shared/reconciliation';

/** The value of the literal at the start of `query`, and what is left after its closing quote. */
function readLiteral(query: string): { value: string; rest: string } {
  if (query[0] !== "'") throw new Error('not a literal');
  let value = '';
  for (let i = 1; i < query.length; i++) {
    const c = query[i];
    if (c === '\\' && i + 1 < query.length) {
      value += query[++i];
    } else if (c === "'" && query[i + 1] === "'") {
      value += "'";
      i++;
    } else if (c === "'") {
      return { value, rest: query.slice(i + 1) };
    } else {
      value += c;
    }
  }
  throw new Error('unterminated literal');
}

test.each([
  ['plain', 'card-issuing'],
  ['a quote', "o'brien"],
  ['a trailing backslash', 'queue\\'],
  ['a backslash before a quote', "x\\' OR WorkflowId != '"],
  ['backslashes only', '\\\\\\'],
])('a value with %s reads back whole, and the literal ends where it does', (_what, value) => {
  const query = `${literal(value)} AND TaskQueue = 'q'`;
  expect(readLiteral(query)).toEqual({ value, rest: " AND TaskQueue = 'q'" });
});

test('backslashes are doubled and quotes doubled', () => {
  expect(literal("a\\b'c")).toBe("'a\\\\b''c'");
});
