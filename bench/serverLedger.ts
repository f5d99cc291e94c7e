/**
 * The database a benchmark's server used, opened once the server has let go of it, and `mkoba ledger
 * verify` run on it (the same invariants): a run that moved money wrongly fails the benchmark rather than
 * printing a rate.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { verifyLedger } from '../src/modules/ledger/useCases/verify.ts';
import { openPgliteStore } from '../src/store/pglite.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import type { Store } from '../src/store/store.ts';

/** PGlite keeps its cluster in the data directory itself or (newer layout) in a subdirectory of it. */
function pgliteClusterDir(dataDir: string): string | undefined {
  return [dataDir, path.join(dataDir, 'pgdata')].find((dir) => existsSync(path.join(dir, 'PG_VERSION')));
}

/** The server's database: its PostgreSQL schema, or the embedded cluster in its data directory. */
export async function openServerStore(where: {
  databaseUrl: string | undefined;
  schema: string | undefined;
  dataDir: string;
}): Promise<Store | undefined> {
  if (where.databaseUrl && where.schema) {
    return openPostgresStore({ connectionString: where.databaseUrl, schema: where.schema });
  }
  const clusterDir = pgliteClusterDir(where.dataDir);
  return clusterDir ? openPgliteStore(clusterDir) : undefined;
}

/** One line for the report; throws, naming the first violations, when an invariant does not hold. */
export async function checkLedger(store: Store, what: string): Promise<string> {
  const violations = await verifyLedger(store);
  if (violations.length > 0) {
    const first = violations
      .slice(0, 5)
      .map((v) => `${v.invariant}: ${v.detail}`)
      .join('; ');
    throw new Error(`${what}: ledger verify found ${violations.length} violation(s): ${first}`);
  }
  return `${what}: ledger verify: all invariants hold`;
}
