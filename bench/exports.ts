/**
 * The export case (`npm run bench -- --cases export`): an organization's events table filled with
 * `--export-rows` rows (1,000,000 by default, generated in SQL), then exported to CSV and to JSON lines through
 * the real export path (runExportNow, the code of `mkoba export` and of the worker), while the process's RSS
 * is sampled. Prints rows/s, the file's size, and RSS before, at peak and after: constant memory shows as a
 * peak that does not grow with the row count.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemDeps } from '../src/app/deps.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import type { ExportFormat } from '../src/modules/exports/domain.ts';
import { exportFormatters } from '../src/modules/exports/routes/formats.ts';
import { runExportNow } from '../src/modules/exports/useCases/run.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPgliteStore } from '../src/store/pglite.ts';
import { createSchema, dropSchema, openPostgresStore } from '../src/store/postgres.ts';
import type { Store } from '../src/store/store.ts';
import {
  type BenchValues,
  benchBackends,
  benchDatabaseUrl,
  fixed,
  log,
  textOption,
  wholeNumber,
} from './options.ts';

export const EXPORT_USAGE = `Export (a large events table exported to CSV and JSON lines, RSS sampled):

  --export-rows N        rows generated (BENCH_EXPORT_ROWS, default 1000000)
  --backends, --database-url  as above
`;

export const EXPORT_OPTIONS = { 'export-rows': { type: 'string' } } as const;

const ROWS_DEFAULT = 1_000_000;
const ROWS_MAX = 20_000_000;
/** Rows generated per INSERT statement. */
const INSERT_ROWS_PER_STATEMENT = 100_000;
const RSS_SAMPLE_INTERVAL_MS = 50;

interface ExportRun {
  backend: string;
  format: ExportFormat;
  rows: number;
  seconds: number;
  bytes: number;
  rssBeforeMb: number;
  rssPeakMb: number;
  rssAfterMb: number;
}

const mb = (bytes: number) => bytes / 1_048_576;

async function fill(store: Store, organizationId: string, rows: number): Promise<void> {
  for (let start = 0; start < rows; start += INSERT_ROWS_PER_STATEMENT) {
    const end = Math.min(rows, start + INSERT_ROWS_PER_STATEMENT);
    // Ids that sort as the rows were made: the prefix and 26 hexadecimal digits of the row number.
    await store.query(
      `INSERT INTO events (id, organization_id, type, resource_id, data, created_at)
       SELECT 'evt_' || lpad(to_hex(g), 26, '0'), $1, 'transfer.settled', 'tr_' || lpad(to_hex(g), 26, '0'),
              jsonb_build_object('transfer_id', 'tr_' || lpad(to_hex(g), 26, '0'), 'status', 'settled',
                                 'amount', (g % 100000)::text || '.00', 'currency', 'KES',
                                 'metadata', jsonb_build_object('order', 'ord-' || g::text)),
              now() - make_interval(secs => $2 - g)
         FROM generate_series($3::bigint, $4::bigint) AS g`,
      [organizationId, rows, start + 1, end],
    );
  }
}

async function runOn(backend: string, store: Store, rows: number): Promise<ExportRun[]> {
  await migrate(store);
  const directory = mkdtempSync(path.join(os.tmpdir(), 'mkoba-bench-export-'));
  const deps = systemDeps(store, 'sandbox', { exportDirectory: directory });
  const { record } = await issueApiKey(deps, { organizationName: `Bench ${randomBytes(3).toString('hex')}` });
  log(`${backend}: generating ${rows} events`);
  const filled = performance.now();
  await fill(store, record.organizationId, rows);
  log(`${backend}: generated in ${fixed((performance.now() - filled) / 1_000, 1)} s`);
  const runs: ExportRun[] = [];
  try {
    for (const format of ['csv', 'jsonl'] as const) {
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, RSS_SAMPLE_INTERVAL_MS);
      const started = performance.now();
      const { job } = await runExportNow(
        deps,
        record.organizationId,
        { type: 'events', format },
        exportFormatters(deps.environment),
        () => {},
      );
      const seconds = (performance.now() - started) / 1_000;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      runs.push({
        backend,
        format,
        rows: job.rowsWritten,
        seconds,
        bytes: job.bytes ?? 0,
        rssBeforeMb: mb(before),
        rssPeakMb: mb(peak),
        rssAfterMb: mb(process.memoryUsage().rss),
      });
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return runs;
}

export async function runExportBench(values: BenchValues): Promise<number> {
  const rows = wholeNumber(
    '--export-rows',
    textOption(values, 'export-rows') ?? process.env.BENCH_EXPORT_ROWS,
    ROWS_DEFAULT,
    1,
    ROWS_MAX,
  );
  const databaseUrl = benchDatabaseUrl(values);
  const runs: ExportRun[] = [];
  for (const backend of benchBackends(values, databaseUrl)) {
    if (backend === 'pglite') {
      const directory = mkdtempSync(path.join(os.tmpdir(), 'mkoba-bench-export-db-'));
      const store = await openPgliteStore(path.join(directory, 'pglite'));
      try {
        runs.push(...(await runOn('PGlite', store, rows)));
      } finally {
        await store.close();
        rmSync(directory, { recursive: true, force: true });
      }
    } else if (databaseUrl) {
      const schema = `bench_export_${randomBytes(4).toString('hex')}`;
      await createSchema(databaseUrl, schema);
      const store = await openPostgresStore({ connectionString: databaseUrl, schema });
      try {
        runs.push(...(await runOn('PostgreSQL', store, rows)));
      } finally {
        await store.close();
        await dropSchema(databaseUrl, schema);
      }
    }
  }
  process.stdout.write(
    [
      '| backend | format | rows | seconds | rows/s | file MB | RSS before MB | RSS peak MB | RSS after MB |',
      '| ------- | ------ | ---: | ------: | -----: | ------: | ------------: | ----------: | -----------: |',
      ...runs.map(
        (r) =>
          `| ${r.backend} | ${r.format} | ${r.rows} | ${fixed(r.seconds, 1)} | ${Math.round(r.rows / r.seconds)} | ${fixed(mb(r.bytes), 1)} | ${fixed(r.rssBeforeMb, 0)} | ${fixed(r.rssPeakMb, 0)} | ${fixed(r.rssAfterMb, 0)} |`,
      ),
      '',
    ].join('\n'),
  );
  return 0;
}
