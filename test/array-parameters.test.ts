/**
 * Array parameters: Mkoba's array literal is, text for text, what node-postgres writes for the same array, for
 * any mix of the values repositories send (strings with quotes, backslashes, braces and commas, numbers,
 * bigints, booleans, dates, JSON objects, nulls, nested arrays); and a statement bound with arrays reads them
 * back as sent, on PostgreSQL; and strings and documents sent together as one JSON array (as the outbox,
 * evidence and idempotency inserts send theirs) read back as sent, on both backends.
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

/** Text a repository stores: any Unicode but NUL (PostgreSQL's text cannot hold it) and lone surrogates. */
const storedText = fc
  .oneof(awkwardText, fc.string({ unit: 'grapheme' }))
  .filter((s) => !s.includes('\u0000'));

describe.each(BACKENDS)('JSON array parameters on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(backend, { empty: true });
  });
  afterAll(async () => {
    await database?.close();
  });

  it('strings sent as one JSON array read back to the letter, in order, beside unnested columns', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(storedText, { nil: null }), { maxLength: 8 }), async (texts) => {
        const rows = await database.store.query<{ i: number; back: string | null }>(
          'SELECT * FROM ROWS FROM (unnest($1::int[]), json_array_elements_text($2::json)) AS v(i, back)',
          [texts.map((_, i) => i), JSON.stringify(texts)],
        );
        expect(rows.map((r) => r.back)).toEqual(texts);
        expect(rows.map((r) => r.i)).toEqual(texts.map((_, i) => i));
      }),
      { numRuns: 150 },
    );
  });

  it('documents sent as one JSON array are the documents each cast alone would be', async () => {
    const document = fc.dictionary(
      storedText,
      fc.oneof(storedText, fc.integer(), fc.boolean(), fc.constant(null)),
      {
        maxKeys: 5,
      },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(document, { maxLength: 6 }), async (documents) => {
        const rows = await database.store.query<{ together: unknown; alone: unknown }>(
          `SELECT v.together, v.alone::jsonb AS alone
             FROM ROWS FROM (jsonb_array_elements($1::jsonb), unnest($2::text[])) AS v(together, alone)`,
          [JSON.stringify(documents), documents.map((d) => JSON.stringify(d))],
        );
        expect(rows.map((r) => r.together)).toEqual(rows.map((r) => r.alone));
        expect(rows.map((r) => r.together)).toEqual(documents);
      }),
      { numRuns: 100 },
    );
  });
});
