/**
 * The database's own single-transaction ceiling: the per-transfer SQL of `transferSql.ts`, one transfer per
 * transaction, with as many clients as the HTTP run has connections. pgbench drives PostgreSQL; an
 * in-process loop over the project's store drives PGlite (and PostgreSQL through node-postgres, which
 * shows what the Node client costs on its own).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Store } from '../src/store/store.ts';
import { percentile, type RunResult, runResultOf } from './stats.ts';
import {
  CLIENT_SEQUENCE_SPAN,
  pgbenchScript,
  TRANSFER_AMOUNT_MINOR,
  type TransferShape,
  toPositional,
  transferStatements,
  walletsOf,
} from './transferSql.ts';

export interface Budget {
  durationS: number;
  /** Transfers to run in all; when set it ends the run instead of the duration (still capped by timeMaxS). */
  amount: number | undefined;
  timeMaxS: number;
}

export interface RunIdentity {
  organizationId: string;
  keyHash: string;
  /** Four lowercase letters that keep this run's ids apart from other runs in the same schema. */
  tag: string;
}

const EXIT_GRACE_MS = 15_000;
const PGBENCH_THREADS_MAX = 2;

/** pgbench from PATH or the Debian PostgreSQL packages; BENCH_PGBENCH overrides. */
export function findPgbench(): string | undefined {
  const configured = process.env.BENCH_PGBENCH;
  if (configured) return existsSync(configured) ? configured : undefined;
  const onPath = spawnSync('sh', ['-c', 'command -v pgbench'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) return onPath.stdout.trim();
  const debian = '/usr/lib/postgresql';
  if (!existsSync(debian)) return undefined;
  const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const candidate = path.join(debian, version, 'bin', 'pgbench');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Runs the script (the project's per-transfer SQL unless another is given) with pgbench against `connectionString` (its `options` go to PGOPTIONS, which is how the
 * schema is chosen) and reads per-transaction latencies from pgbench's transaction log.
 */
export async function runPgbench(
  pgbench: string,
  connectionString: string,
  shape: TransferShape,
  identity: RunIdentity,
  budget: Budget,
  script: string = pgbenchScript(shape),
): Promise<RunResult> {
  const work = mkdtempSync(path.join(tmpdir(), 'mkoba-pgbench-'));
  try {
    const scriptFile = path.join(work, 'transfer.sql');
    writeFileSync(scriptFile, script);
    const url = new URL(connectionString);
    const pgOptions = url.searchParams.get('options') ?? undefined;
    url.searchParams.delete('options');
    const limit =
      budget.amount === undefined
        ? ['-T', String(budget.durationS)]
        : ['-t', String(Math.max(1, Math.ceil(budget.amount / shape.clients)))];
    const args = [
      '-n', // no vacuum of pgbench's own tables: there are none
      '-M',
      'extended', // parameters sent apart from the text, as node-postgres does
      '-c',
      String(shape.clients),
      '-j',
      String(Math.min(PGBENCH_THREADS_MAX, shape.clients)),
      ...limit,
      '-D',
      'seq=0',
      '-D',
      `org=${identity.organizationId}`,
      '-D',
      `keyhash=${identity.keyHash}`,
      '-D',
      `tag=${identity.tag}`,
      '-D',
      `amt=${TRANSFER_AMOUNT_MINOR}`,
      '-l',
      '--log-prefix',
      path.join(work, 'log'),
      '-f',
      scriptFile,
      url.toString(),
    ];
    const env = { ...process.env, ...(pgOptions ? { PGOPTIONS: pgOptions } : {}) };
    const { code, stdout, stderr } = await runBounded(pgbench, args, env, budget.timeMaxS * 1000);
    if (code !== 0) throw new Error(`pgbench exited with ${code}:\n${stderr}\n${stdout}`);
    const latenciesMs: number[] = [];
    let failed = 0;
    for (const file of readdirSync(work).filter((f) => f.startsWith('log'))) {
      for (const line of readFileSync(path.join(work, file), 'utf8').split('\n')) {
        const fields = line.trim().split(/\s+/);
        const micros = fields[2];
        if (micros === undefined || micros === '') continue;
        if (/^\d+$/.test(micros)) latenciesMs.push(Number(micros) / 1000);
        else failed++;
      }
    }
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1]);
    const durationS = Number.isFinite(tps) && tps > 0 ? latenciesMs.length / tps : budget.durationS;
    latenciesMs.sort((a, b) => a - b);
    return {
      transfers: latenciesMs.length,
      durationS,
      transfersPerS: tps,
      p50Ms: percentile(latenciesMs, 50),
      p99Ms: percentile(latenciesMs, 99),
      failures: failed === 0 ? {} : { failed },
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A child process with its output kept, ended (SIGTERM, then SIGKILL) if it runs past `timeoutMs`. */
export function runBounded(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const term = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    const kill = setTimeout(() => child.kill('SIGKILL'), timeoutMs + EXIT_GRACE_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(term);
      clearTimeout(kill);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The same statements from Node through a `Store`: `clients` loops, each running reads then one
 * transaction per transfer until the duration (or the amount) is used up. PGlite has one session, so its
 * loops take turns, which is all the concurrency it offers the API too.
 */
export async function runStoreLoop(
  store: Store,
  shape: TransferShape,
  identity: RunIdentity,
  budget: Budget,
): Promise<RunResult> {
  const { reads, transaction } = transferStatements(shape);
  const compile = (sql: string) => toPositional(sql);
  const compiledReads = reads.map(compile);
  const compiledTransaction = transaction.map(compile);
  const startedAt = performance.now();
  const deadline = startedAt + (budget.amount === undefined ? budget.durationS : budget.timeMaxS) * 1000;
  let remaining = budget.amount ?? Number.POSITIVE_INFINITY;
  const latenciesMs: number[] = [];
  const failures: Record<string, number> = {};

  const client = async (clientId: number) => {
    for (let seq = 1; remaining > 0 && performance.now() < deadline; seq++) {
      remaining--;
      const { src, dst } = walletsOf(shape, clientId, seq);
      const values: Record<string, string> = {
        org: identity.organizationId,
        keyhash: identity.keyHash,
        tag: identity.tag,
        amt: String(TRANSFER_AMOUNT_MINOR),
        n: String(clientId * CLIENT_SEQUENCE_SPAN + seq),
        src: String(src),
        dst: String(dst),
      };
      const params = (names: string[]) => names.map((name) => values[name]);
      const began = performance.now();
      try {
        for (const read of compiledReads) await store.query(read.text, params(read.names));
        await store.transaction(async (tx) => {
          for (const statement of compiledTransaction)
            await tx.query(statement.text, params(statement.names));
        });
        latenciesMs.push(performance.now() - began);
      } catch (error) {
        const code = (error as { code?: string }).code ?? (error as Error).message.slice(0, 40);
        failures[code] = (failures[code] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: shape.clients }, (_, i) => client(i)));
  const durationS = (performance.now() - startedAt) / 1000;
  return runResultOf(latenciesMs, durationS, failures);
}
