/**
 * Test databases on PostgreSQL are copies of one migrated template database (CREATE DATABASE … TEMPLATE
 * copies files, a fraction of a second), instead of a schema migrated from nothing per test file (seconds of
 * DDL each, and a catalog that bloats with every dropped schema). The template holds the migrated schema
 * TEMPLATE_SCHEMA; each copy renames it to the test's own schema name, so tests and the processes they start
 * address it exactly as before.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/store/migrate.ts';
import { createSchema, openPostgresStore } from '../../src/store/postgres.ts';

/** The schema migrated inside the template database. */
const TEMPLATE_SCHEMA = 'mkoba_template';
const TEMPLATE_PREFIX = 'mkoba_test_template_';
/** Serialises template builds across concurrent test runs on one server (an arbitrary, fixed key). */
const TEMPLATE_BUILD_LOCK_KEY = 7_311_902_401;
/** pg_database names are at most 63 bytes; ours are short and plain. */
const DATABASE_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

function quoted(name: string): string {
  if (!DATABASE_NAME_PATTERN.test(name)) throw new Error(`invalid database name '${name}'`);
  return `"${name}"`;
}

/** The same server and credentials as `serverUrl`, on another database. */
export function databaseUrl(serverUrl: string, database: string, schema?: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  if (schema) url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function withAdmin<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Builds the template for these migrations unless it exists; returns its name. */
export async function ensurePostgresTemplate(serverUrl: string, templateId: string): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${templateId}`;
  return withAdmin(serverUrl, async (admin) => {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_BUILD_LOCK_KEY]);
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount) return name;
      // Built under another name and renamed when complete, so a run killed half-way leaves no template.
      const partial = `${name}_p${process.pid}`;
      await admin.query(`DROP DATABASE IF EXISTS ${quoted(partial)}`);
      await admin.query(`CREATE DATABASE ${quoted(partial)}`);
      const partialUrl = databaseUrl(serverUrl, partial);
      await createSchema(partialUrl, TEMPLATE_SCHEMA);
      const store = await openPostgresStore({ connectionString: partialUrl, schema: TEMPLATE_SCHEMA });
      try {
        await migrate(store);
      } finally {
        await store.close();
      }
      await admin.query(`ALTER DATABASE ${quoted(partial)} RENAME TO ${quoted(name)}`);
      // Nothing connects to it by mistake: a connection to a template makes every copy of it wait and fail.
      await admin.query(`ALTER DATABASE ${quoted(name)} WITH ALLOW_CONNECTIONS false`);
      return name;
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_BUILD_LOCK_KEY]);
    }
  });
}

export interface PostgresTestDatabase {
  /** The test's own database: a copy of the template, or empty. */
  database: string;
  schema: string;
  /** A connection string for it with `schema` first on the search_path, for processes the test starts. */
  url: string;
  drop(): Promise<void>;
}

/** A new database for one test: a copy of the migrated template, or (`template` undefined) an empty schema. */
export async function createPostgresTestDatabase(
  serverUrl: string,
  template: string | undefined,
): Promise<PostgresTestDatabase> {
  const suffix = randomBytes(6).toString('hex');
  const database = `t_${suffix}`;
  const schema = `t_${suffix}`;
  await withAdmin(serverUrl, (admin) =>
    admin.query(
      template
        ? `CREATE DATABASE ${quoted(database)} TEMPLATE ${quoted(template)}`
        : `CREATE DATABASE ${quoted(database)}`,
    ),
  );
  await withAdmin(databaseUrl(serverUrl, database), (client) =>
    client.query(
      template
        ? `ALTER SCHEMA ${TEMPLATE_SCHEMA} RENAME TO ${quoted(schema)}`
        : `CREATE SCHEMA ${quoted(schema)}`,
    ),
  );
  return {
    database,
    schema,
    url: databaseUrl(serverUrl, database, schema),
    // FORCE: a process the test started and killed may still hold a connection the server has not reaped.
    drop: async () => {
      await withAdmin(serverUrl, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS ${quoted(database)} WITH (FORCE)`),
      );
    },
  };
}
