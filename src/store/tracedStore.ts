/**
 * A store whose statements are spans (when traces are on: src/telemetry/tracing.ts). A span names the
 * statement's kind and first table (`SELECT wallets`), never its text or parameters: a pipelined group's
 * text has its values inlined, and values are customers' data. Only statements inside a trace (a request,
 * a writer batch, a delivery) are spans: the workers' polling would otherwise be a trace per statement.
 */
import { activeTracing, inSpan, type SpanAttributes, type Tracing } from '../telemetry/tracing.ts';
import type { Queryable, Row, Store } from './store.ts';

/** The table a statement names first after FROM, INTO, UPDATE or JOIN: an identifier, never a value. */
const TABLE = /\b(?:FROM|INTO|UPDATE|JOIN)\s+(?:ONLY\s+)?((?:[a-z_][a-z0-9_]*\.)?[a-z_][a-z0-9_]*)/i;
const KIND = /^\s*([a-z]+)/i;

/** A statement's span name and attributes: its kind and first table. */
export function statementSummary(sql: string, system: string): { name: string; attributes: SpanAttributes } {
  const kind = (KIND.exec(sql)?.[1] ?? 'statement').toUpperCase();
  const table = TABLE.exec(sql)?.[1]?.toLowerCase();
  return {
    name: table ? `${kind} ${table}` : kind,
    attributes: { 'db.system.name': system, 'db.operation.name': kind, 'db.collection.name': table },
  };
}

function traced(db: Queryable, system: string, tracing: Tracing): Queryable {
  const wrapped: Queryable & { lockOwner?: object } = {
    query<R extends Row>(sql: string, params?: readonly unknown[]): Promise<R[]> {
      if (!tracing.current()) return db.query<R>(sql, params);
      const { name, attributes } = statementSummary(sql, system);
      return inSpan(name, { kind: 'client', attributes }, () => db.query<R>(sql, params));
    },
    exec(sql: string): Promise<void> {
      if (!tracing.current()) return db.exec(sql);
      const { name, attributes } = statementSummary(sql, system);
      return inSpan(name, { kind: 'client', attributes }, () => db.exec(sql));
    },
  };
  // Locks taken through the wrapper are held by the transaction it wraps (src/store/lockOrder.ts).
  Object.defineProperty(wrapped, 'lockOwner', {
    get: () => (db as { lockOwner?: object }).lockOwner ?? db,
  });
  const many = db.queryMany?.bind(db);
  if (many) {
    wrapped.queryMany = (statements) => {
      if (!tracing.current()) return many(statements);
      const summaries = statements.map((s) => statementSummary(s.text, system));
      const kinds = [...new Set(summaries.map((s) => s.name))];
      return inSpan(
        'PIPELINE',
        {
          kind: 'client',
          attributes: {
            'db.system.name': system,
            'db.operation.name': 'PIPELINE',
            'db.operation.batch.size': statements.length,
            'mkoba.db.statements': kinds.join(', '),
          },
        },
        () => many(statements),
      );
    };
  }
  return wrapped;
}

/** The store with spans for its statements and transactions; the store itself when traces are off. */
export function tracedStore(store: Store, tracing: Tracing | undefined = activeTracing()): Store {
  if (!tracing) return store;
  const system = store.driver === 'postgres' ? 'postgresql' : 'pglite';
  const base = traced(store, system, tracing);
  const wrapped: Store = {
    ...store,
    driver: store.driver,
    query: base.query,
    exec: base.exec,
    transaction: (fn) => {
      if (!tracing.current()) return store.transaction((tx) => fn(traced(tx, system, tracing)));
      const attributes = { 'db.system.name': system };
      return inSpan('TRANSACTION', { kind: 'client', attributes }, () =>
        store.transaction((tx) => fn(traced(tx, system, tracing))),
      );
    },
  };
  if (base.queryMany) wrapped.queryMany = base.queryMany;
  return wrapped;
}
