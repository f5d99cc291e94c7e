/**
 * A Queryable that gathers the statements issued together (before the event loop turns) and sends them in one
 * round trip through the underlying Queryable's queryMany, in the order they were issued; each caller gets its
 * own rows. Code written against Queryable runs unchanged: start the reads with Promise.all over the
 * pipeline, and their first statements share one message. A statement issued after an answer (a second read
 * that depends on the first) goes out with the next group. Statements still run one after another, each
 * with a snapshot taken after the one before it finished, exactly as if sent one by one.
 *
 * Where queryMany is absent (the embedded database has no network to save) the statements run one by one.
 */
import type { Queryable, Row } from './store.ts';

interface Waiting {
  text: string;
  params: readonly unknown[];
  resolve: (rows: Row[]) => void;
  reject: (error: unknown) => void;
}

export class QueryPipeline implements Queryable {
  private waiting: Waiting[] = [];
  private scheduled = false;

  constructor(private readonly db: Queryable) {}

  /** Locks taken through the pipeline are held by the transaction it wraps (src/store/lockOrder.ts). */
  get lockOwner(): object {
    return (this.db as { lockOwner?: object }).lockOwner ?? this.db;
  }

  query<R extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    return new Promise<R[]>((resolve, reject) => {
      this.waiting.push({ text: sql, params, resolve: resolve as (rows: Row[]) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After every promise continuation already queued: callers that await something of their own
        // before their statement still join this group.
        setImmediate(() => void this.flush());
      }
    });
  }

  async exec(sql: string): Promise<void> {
    await this.db.exec(sql);
  }

  private async flush(): Promise<void> {
    const group = this.waiting;
    this.waiting = [];
    this.scheduled = false;
    try {
      if (group.length === 1 || !this.db.queryMany) {
        for (const w of group) w.resolve(await this.db.query(w.text, w.params));
        return;
      }
      const results = await this.db.queryMany(group);
      group.forEach((w, i) => {
        w.resolve(results[i] ?? []);
      });
    } catch (error) {
      for (const w of group) w.reject(error);
    }
  }
}
