/**
 * A parameterised statement with its parameters written into it as quoted literals, so that several can go
 * in one simple-protocol message (one round trip). A parameter travels as text of unknown type either way:
 * node-postgres's own conversion (prepareValue) makes the text, and a quoted literal is typed by its context
 * exactly as a bound parameter is, so the statement means the same. Strings are escaped with node-postgres's
 * escapeLiteral; binary values are refused.
 */
import pg from 'pg';
import pgUtils from 'pg/lib/utils.js';

export function inlineParameters(text: string, params: readonly unknown[]): string {
  if (text.includes('$$')) throw new Error('a dollar-quoted statement cannot be inlined');
  let out = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "'") quoted = !quoted;
    if (quoted || c !== '$' || !/[0-9]/.test(text[i + 1] ?? '')) {
      out += c;
      continue;
    }
    let j = i + 1;
    while (j < text.length && /[0-9]/.test(text[j] as string)) j++;
    const index = Number(text.slice(i + 1, j)) - 1;
    if (index < 0 || index >= params.length)
      throw new Error(`statement refers to $${index + 1} without a value`);
    out += literal(params[index]);
    i = j - 1;
  }
  return out;
}

function literal(value: unknown): string {
  const text = pgUtils.prepareValue(value);
  if (text === null) return 'NULL';
  if (typeof text !== 'string') throw new Error('a binary parameter cannot be inlined');
  return pg.escapeLiteral(text);
}
