/**
 * A parameterised statement with its parameters written into it as quoted literals, so that several can go
 * in one simple-protocol message (one round trip). A parameter travels as text of unknown type either way:
 * node-postgres's own conversion (prepareValue) makes the text, and a quoted literal is typed by its context
 * exactly as a bound parameter is, so the statement means the same. Quoting follows node-postgres's
 * escapeLiteral (quotes doubled; with a backslash, backslashes doubled in an E'' string); binary values, NUL
 * characters (which PostgreSQL refuses in text anyway) and dollar-quoted statements are refused.
 */
import pgUtils from 'pg/lib/utils.js';
import { arrayLiteral } from './arrayParameters.ts';

/** A quoted string literal (kept whole), or a parameter reference. */
const TOKEN = /'(?:[^']|'')*'|\$(\d+)/g;

/** The statement with each `$n` outside quoted literals replaced by `replace(n)`. */
export function replaceParameters(text: string, replace: (number: number) => string): string {
  if (text.includes('$$')) throw new Error('a dollar-quoted statement cannot be rewritten');
  return text.replace(TOKEN, (token: string, number: string | undefined) =>
    number === undefined ? token : replace(Number(number)),
  );
}

export function inlineParameters(text: string, params: readonly unknown[]): string {
  return replaceParameters(text, (number) => {
    if (number < 1 || number > params.length)
      throw new Error(`statement refers to $${number} without a value`);
    return literal(params[number - 1]);
  });
}

function literal(value: unknown): string {
  const text = Array.isArray(value) ? arrayLiteral(value) : pgUtils.prepareValue(value);
  if (text === null) return 'NULL';
  if (typeof text !== 'string') throw new Error('a binary parameter cannot be inlined');
  // A query message ends at its first NUL: a value holding one would cut the statement short.
  if (text.includes('\u0000')) throw new Error('a parameter holding a NUL character cannot be inlined');
  const quoted = text.replace(/'/g, "''");
  return text.includes('\\') ? ` E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}
