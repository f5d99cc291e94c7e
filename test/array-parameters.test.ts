/**
 * Array parameters: Mkoba's array literal is, text for text, what node-postgres writes for the same array, for
 * any mix of the values repositories send (strings with quotes, backslashes, braces and commas, numbers,
 * bigints, booleans, dates, JSON objects, nulls, nested arrays); and a statement bound with arrays reads them
 * back as sent, on PostgreSQL.
 */
import fc from 'fast-check';
import pgUtils from 'pg/lib/utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayLiteral, withArrayLiterals } from '../src/store/arrayParameters.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from './support/harness.ts';

const awkwardText = fc.oneof(
  fc.string(),
  fc.constantFrom(
    '',
    'NULL',
    '"',
    '\\',
    '\\"',
    '{a,b}',
    'a,b',
    ' spaced ',
    "it's",
    '{"json": "x\\"y"}',
    'ünï ✓',
  ),
);
const element = fc.oneof(
  awkwardText,
  fc.integer(),
  fc.bigInt(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: true }),
  fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean())),
);

describe('arrayLiteral', () => {
  it('writes exactly what node-postgres writes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(element, fc.array(element, { maxLength: 4 })), { maxLength: 12 }),
        (values) => {
          expect(arrayLiteral(values)).toBe(pgUtils.prepareValue(values));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('leaves binary elements to node-postgres, and parameters without arrays as they are', () => {
    const withBytes = [Buffer.from('ab'), 'x'];
    expect(arrayLiteral(withBytes)).toBe(pgUtils.prepareValue(withBytes));
    const params = ['a', 1, null];
    expect(withArrayLiterals(params)).toBe(params);
    expect(withArrayLiterals(['a', ['b"', null]])).toEqual(['a', '{"b\\"",NULL}']);
  });
});

describe.each(BACKENDS.filter((b) => b === 'postgres'))('array parameters on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(backend, { empty: true });
  });
  afterAll(async () => {
    await database?.close();
  });

  it('a bound array reads back element for element', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.option(
            awkwardText.filter((s) => !s.includes('\u0000')),
            { nil: null },
          ),
        ),
        async (values) => {
          const [row] = await database.store.query<{ back: (string | null)[] }>('SELECT $1::text[] AS back', [
            values,
          ]);
          expect(row?.back).toEqual(values);
        },
      ),
      { numRuns: 200 },
    );
  });
});
