/**
 * What the benchmark cases share: their parsed command line (validated once, against every case's options,
 * by bench/main.ts), the loopback-only database URL, the backends, and a schema pinned through the URL.
 */
import { openPostgresStore } from '../src/store/postgres.ts';

export type BenchValues = Record<string, string | boolean | undefined>;
export type Backend = 'pglite' | 'postgres';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export const log = (line: string) => process.stderr.write(`${line}\n`);
export const fixed = (value: number, digits: number) =>
  Number.isFinite(value) ? value.toFixed(digits) : '–';

/** A string option's text (undefined when absent); a boolean where a value was wanted is a mistake. */
export function textOption(values: BenchValues, name: string): string | undefined {
  const value = values[name];
  if (typeof value === 'boolean') throw new Error(`--${name} needs a value`);
  return value;
}

export function wholeNumber(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, got '${text}'`);
  }
  return value;
}

/** --database-url, else BENCH_DATABASE_URL, TEST_DATABASE_URL, DATABASE_URL; only a server on this machine. */
export function benchDatabaseUrl(values: BenchValues): string | undefined {
  const env = process.env;
  const url =
    textOption(values, 'database-url') ?? env.BENCH_DATABASE_URL ?? env.TEST_DATABASE_URL ?? env.DATABASE_URL;
  if (url !== undefined && !LOOPBACK_HOSTS.has(new URL(url).hostname)) {
    throw new Error('the benchmark only targets a database on this machine (127.0.0.1, localhost or ::1)');
  }
  return url;
}

/** --backends (BENCH_BACKENDS), default both; PostgreSQL only when a database URL is given. */
export function benchBackends(values: BenchValues, databaseUrl: string | undefined): Backend[] {
  const requested = (textOption(values, 'backends') ?? process.env.BENCH_BACKENDS ?? 'pglite,postgres')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  for (const backend of requested) {
    if (backend !== 'pglite' && backend !== 'postgres') throw new Error(`unknown backend '${backend}'`);
  }
  return (requested as Backend[]).filter((b) => b === 'pglite' || databaseUrl !== undefined);
}

/** node-postgres passes `options` to the server as a start-up option, so every connection uses the schema. */
export function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

export async function postgresVersion(url: string): Promise<string | undefined> {
  const store = await openPostgresStore({ connectionString: url, poolConnectionsMax: 1 });
  try {
    const [row] = await store.query<{ v: string; fsync: string; sync: string }>(
      "SELECT split_part(version(), ' on ', 1) AS v, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync",
    );
    return row && `${row.v}, fsync=${row.fsync}, synchronous_commit=${row.sync}`;
  } finally {
    await store.close();
  }
}
