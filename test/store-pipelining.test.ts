/**
 * The store's round-trip savers, on a real database: statements written with their parameters as literals
 * (QueryPipeline's one message on PostgreSQL) mean exactly what the bound statements mean; a pipeline sends
 * the statements issued together in one round trip, in order, each seeing the ones before it; a transaction
 * whose first statements are a pipeline carries BEGIN with them; a StatementChain writes many rows with one
 * statement, checks foreign keys once all are in, and fails or succeeds whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inlineParameters } from '../src/store/inlineParameters.ts';
import { QueryPipeline } from '../src/store/queryPipeline.ts';
import { StatementChain } from '../src/store/statementChain.ts';
import type { Queryable, Row } from '../src/store/store.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from './support/harness.ts';

/** Delegates to a transaction and counts what reached it: one call is one round trip. */
function counting(tx: Queryable) {
  const calls: string[] = [];
  const db: Queryable = {
    query: (sql, params) => {
      calls.push('query');
      return tx.query(sql, params);
    },
    exec: (sql) => tx.exec(sql),
    ...(tx.queryMany
      ? {
          queryMany: (statements: readonly { text: string; params: readonly unknown[] }[]) => {
            calls.push(`queryMany(${statements.length})`);
            return (tx.queryMany as NonNullable<Queryable['queryMany']>)(statements);
          },
        }
      : {}),
  };
  return { db, calls };
}

const AWKWARD_TEXTS = ["it's", 'back\\slash', '{"braces", and commas}', 'NULL', '', '$1 and $$', 'ünïcödé ✓'];

describe('inlineParameters', () => {
  it('leaves $n inside a quoted literal alone and refuses what it cannot write as text', () => {
    expect(inlineParameters("SELECT '$1', $1::text", ['x'])).toBe("SELECT '$1', 'x'::text");
    expect(inlineParameters("SELECT 'it''s $2', $2", ['a', 'b'])).toBe("SELECT 'it''s $2', 'b'");
    expect(inlineParameters('SELECT $1', [null])).toBe('SELECT NULL');
    expect(() => inlineParameters('SELECT $2', ['only one'])).toThrow(/\$2/);
    expect(() => inlineParameters('SELECT $$x$$, $1', ['y'])).toThrow(/dollar/);
    expect(() => inlineParameters('SELECT $1', [Buffer.from('x')])).toThrow(/binary/);
    expect(() => inlineParameters('SELECT $1', ["a\u0000'; DROP TABLE x; --"])).toThrow(/NUL/);
  });
});

describe.each(BACKENDS)('statement pipelining on %s', (backend) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase(backend, { empty: true });
    await database.store.exec(`
      CREATE TABLE pipeline_parents (id text PRIMARY KEY, note text);
      CREATE TABLE pipeline_children (
        id text PRIMARY KEY,
        parent_id text NOT NULL REFERENCES pipeline_parents (id),
        amount bigint NOT NULL,
        tags text NOT NULL,
        at timestamptz NOT NULL,
        data jsonb NOT NULL
      );`);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('a statement with its parameters written in answers exactly what the bound statement answers', async () => {
    const sql = `SELECT $1::text AS text, $2::text[] AS tags, $3::bigint AS big, $4::timestamptz AS at,
                        $5::jsonb AS data, $6::text AS missing, $7::int + 1 AS number`;
    const params = [
      AWKWARD_TEXTS.join('|'),
      [...AWKWARD_TEXTS, null],
      '9223372036854775807',
      new Date('2026-11-26T10:00:00.123Z'),
      JSON.stringify({ quote: "it's", nested: ['a\\b', { n: 1 }] }),
      null,
      41,
    ];
    const bound = await database.store.query(sql, params);
    const inlined = await database.store.query(inlineParameters(sql, params));
    expect(inlined).toEqual(bound);
    // The embedded driver answers int8 as a JS bigint, node-postgres as a string: the repositories take both.
    expect(String(bound[0]?.big)).toBe('9223372036854775807');
    expect(bound[0]).toMatchObject({ number: 42, missing: null });
  });

  it('sends the statements issued together in one round trip, in order, each seeing the ones before it', async () => {
    const result = await database.store.transaction(async (tx) => {
      const { db, calls } = counting(tx);
      const pipeline = new QueryPipeline(db);
      const [inserted, seen, count] = await Promise.all([
        pipeline.query('INSERT INTO pipeline_parents (id, note) VALUES ($1, $2) RETURNING id', [
          'p1',
          "it's",
        ]),
        pipeline.query('SELECT note FROM pipeline_parents WHERE id = $1', ['p1']),
        pipeline.query<{ n: number }>('SELECT count(*)::int AS n FROM pipeline_parents'),
      ]);
      // Issued after an answer: the next round trip.
      const after = await pipeline.query('SELECT id FROM pipeline_parents ORDER BY id');
      return { inserted, seen, count, after, calls };
    });
    expect(result.inserted).toEqual([{ id: 'p1' }]);
    expect(result.seen).toEqual([{ note: "it's" }]);
    expect(result.count).toEqual([{ n: 1 }]);
    expect(result.after).toEqual([{ id: 'p1' }]);
    // PostgreSQL: one message for the three, then the fourth alone; the embedded database runs them one by one.
    expect(result.calls).toEqual(
      backend === 'postgres' ? ['queryMany(3)', 'query'] : ['query', 'query', 'query', 'query'],
    );
  });

  it('statements issued together on a fresh transaction, without a pipeline, run in the order issued', async () => {
    // The first waits for BEGIN; the others must not overtake it (a lock taken out of order can deadlock).
    const result = await database.store.transaction(async (tx) => {
      const [, seen, count] = await Promise.all([
        tx.query('INSERT INTO pipeline_parents (id, note) VALUES ($1, $2)', ['p-order', 'first']),
        tx.query('SELECT note FROM pipeline_parents WHERE id = $1', ['p-order']),
        tx.query<{ n: number }>('SELECT count(*)::int AS n FROM pipeline_parents WHERE id = $1', ['p-order']),
      ]);
      return { seen, count };
    });
    expect(result.seen).toEqual([{ note: 'first' }]);
    expect(result.count).toEqual([{ n: 1 }]);
    await database.store.query("DELETE FROM pipeline_parents WHERE id = 'p-order'");
  });

  it('a failing statement fails its whole group and the transaction, which the first message began', async () => {
    await expect(
      database.store.transaction(async (tx) => {
        const pipeline = new QueryPipeline(tx);
        await Promise.all([
          pipeline.query('INSERT INTO pipeline_parents (id) VALUES ($1)', ['p2']),
          pipeline.query('INSERT INTO pipeline_parents (id) VALUES ($1)', ['p1']),
          pipeline.query('SELECT 1'),
        ]);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    const rows = await database.store.query("SELECT id FROM pipeline_parents WHERE id = 'p2'");
    expect(rows).toEqual([]);
    // A transaction that never sent a statement commits nothing and needs no BEGIN.
    await expect(database.store.transaction(async () => 'nothing')).resolves.toBe('nothing');
  });

  it('a chain writes children before their parent in one statement, and notifies with it', async () => {
    const heard: string[] = [];
    const stop = await database.store.listen?.('pipeline_test', () => heard.push('notified'));
    const statements = await database.store.transaction(async (tx) => {
      const { db, calls } = counting(tx);
      const chain = new StatementChain();
      await chain.query(
        `INSERT INTO pipeline_children (id, parent_id, amount, tags, at, data)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::timestamptz[], $6::jsonb[])
           AS v(id, parent_id, amount, tags, at, data)`,
        [
          ['c1', 'c2'],
          ['p3', 'p3'],
          ['1', '9223372036854775807'],
          ['a', 'b,c'],
          ['2026-11-26T10:00:00Z', '2026-11-26T11:00:00Z'],
          ['{"x":1}', '{"y":"it\'s"}'],
        ],
      );
      await chain.query('INSERT INTO pipeline_parents (id, note) VALUES ($1, $2)', [
        'p3',
        'parent after child',
      ]);
      await chain.query('UPDATE pipeline_parents SET note = $2 WHERE id = $1', ['p1', 'updated']);
      await chain.query('NOTIFY pipeline_test');
      expect(chain.size).toBe(4);
      await chain.run(db);
      return calls;
    });
    expect(statements).toEqual(['query']);
    const children = await database.store.query<Row>(
      'SELECT id, amount::text AS amount, tags, data FROM pipeline_children ORDER BY id',
    );
    expect(children).toEqual([
      { id: 'c1', amount: '1', tags: 'a', data: { x: 1 } },
      { id: 'c2', amount: '9223372036854775807', tags: 'b,c', data: { y: "it's" } },
    ]);
    expect(await database.store.query("SELECT note FROM pipeline_parents WHERE id = 'p1'")).toEqual([
      { note: 'updated' },
    ]);
    if (stop) {
      for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(heard.length).toBeGreaterThan(0);
      await stop();
    }
  });

  it('a chain fails whole: a child without a parent leaves none of the chain written', async () => {
    const chain = new StatementChain();
    await chain.query('INSERT INTO pipeline_parents (id) VALUES ($1)', ['p4']);
    await chain.query(
      `INSERT INTO pipeline_children (id, parent_id, amount, tags, at, data)
       VALUES ($1, $2, 1, '', now(), '{}')`,
      ['c3', 'nobody'],
    );
    await expect(database.store.transaction((tx) => chain.run(tx))).rejects.toMatchObject({ code: '23503' });
    expect(await database.store.query("SELECT id FROM pipeline_parents WHERE id = 'p4'")).toEqual([]);
  });

  it('a chain refuses reads and RETURNING rather than answering them with no rows', async () => {
    const chain = new StatementChain();
    await expect(chain.query('SELECT 1')).rejects.toThrow(/only writes/);
    await expect(
      chain.query('INSERT INTO pipeline_parents (id) VALUES ($1) RETURNING id', ['p5']),
    ).rejects.toThrow(/only writes/);
    await expect(chain.exec()).rejects.toThrow();
    expect(chain.size).toBe(0);
  });
});
