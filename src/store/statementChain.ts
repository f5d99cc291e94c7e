/**
 * Writes whose results nobody reads, gathered and then sent as ONE statement: each becomes a data-modifying
 * CTE of one `WITH`, so a batch's inserts and updates cost one round trip and one plan instead of one each.
 *
 * What holds for them (PostgreSQL's rules for data-modifying CTEs): they all run on one snapshot, so none sees
 * another's rows or changes; a row is changed by at most one of them; their foreign-key and trigger checks
 * run once all of them are done, so a child may come before its parent. Callers therefore chain only writes
 * that do not read each other's effects (the writer's batch: transfers, journal, account sums, usage, evidence,
 * events, deliveries, idempotency records). A read, a RETURNING or a statement with its own WITH is refused
 * here rather than silently answered with no rows.
 */
import { replaceParameters } from './inlineParameters.ts';
import type { Queryable, Row } from './store.ts';

interface ChainedStatement {
  text: string;
  params: readonly unknown[];
}

const WRITE = /^\s*(INSERT|UPDATE|DELETE)\b/i;
const RETURNING = /\bRETURNING\b/i;
const NOTIFY = /^\s*NOTIFY\s+([a-z_][a-z0-9_]*)\s*$/i;

export class StatementChain implements Queryable {
  private statements: ChainedStatement[] = [];
  private channels = new Set<string>();

  /** Gathers a write (answered with no rows) or a NOTIFY (sent as pg_notify with the writes). */
  async query<R extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    const notify = NOTIFY.exec(sql);
    if (notify) {
      this.channels.add(notify[1] as string);
      return [];
    }
    if (!WRITE.test(sql) || RETURNING.test(sql)) {
      throw new Error(`only writes without RETURNING can be chained: ${sql.trim().slice(0, 60)}`);
    }
    this.statements.push({ text: sql, params });
    return [];
  }

  async exec(): Promise<void> {
    throw new Error('a statement chain takes parameterised writes only');
  }

  get size(): number {
    return this.statements.length + this.channels.size;
  }

  /** Sends what was gathered on `db` (the transaction) as one statement, and empties the chain. */
  async run(db: Queryable): Promise<void> {
    const statements = this.statements;
    const channels = [...this.channels];
    this.statements = [];
    this.channels = new Set();
    if (statements.length === 0 && channels.length === 0) return;
    if (statements.length === 1 && channels.length === 0) {
      const [only] = statements as [ChainedStatement];
      await db.query(only.text, only.params);
      return;
    }
    const params: unknown[] = [];
    const ctes = statements.map((s, i) => {
      const offset = params.length;
      params.push(...s.params);
      return `w${i} AS (${replaceParameters(s.text, (n) => `$${n + offset}`)})`;
    });
    const notifies = channels.map((channel) => {
      params.push(channel);
      return `pg_notify($${params.length}, '')`;
    });
    const head = ctes.length > 0 ? `WITH ${ctes.join(',\n')}\n` : '';
    await db.query(`${head}SELECT ${notifies.length > 0 ? notifies.join(', ') : '1'}`, params);
  }
}
