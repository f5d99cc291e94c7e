/**
 * `POST /v1/transfers` driven by wrk (Debian's `wrk` package) with a Lua script: a C load generator that
 * costs the machine far less CPU per request than autocannon in Node, so the two shared cores go to the
 * server and PostgreSQL. Each request carries its own Idempotency-Key and picks its wallets as
 * `driveTransfers` does (distinct: source i mod N to its own destination; hot: wallet 0 to destinations
 * round-robin). When wrk is not installed the benchmark falls back to autocannon (bench/httpLoad.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Api, LoadOptions } from './httpLoad.ts';
import { runBounded } from './sqlCeiling.ts';
import type { RunResult } from './stats.ts';
import { TRANSFER_AMOUNT_TEXT, TRANSFER_CURRENCY } from './transferSql.ts';

export const WRK_INSTALL_HINT = 'apt-get install -y wrk (Debian/Ubuntu), or set BENCH_WRK to its path';
/** Two threads: the machine this bench is written for has two cores, shared with the server. */
const WRK_THREADS_MAX = 2;
const REQUEST_TIMEOUT_S = 30;
const RESULT_MARK = 'MKOBA_WRK_RESULT ';

/** wrk from BENCH_WRK or PATH; undefined when absent (BENCH_WRK=0 forces the Node generator). */
export function findWrk(): string | undefined {
  const configured = process.env.BENCH_WRK;
  if (configured === '0') return undefined;
  if (configured) return configured;
  const onPath = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  return onPath.status === 0 && onPath.stdout.trim() ? onPath.stdout.trim() : undefined;
}

const luaString = (text: string) => JSON.stringify(text);

/** The Lua script: the wallets inlined, a counter per thread, and a JSON line of results at the end. */
export function wrkScript(
  apiKey: string,
  wallets: readonly string[],
  options: Pick<LoadOptions, 'hot' | 'idempotency' | 'tag'>,
): string {
  const sources = wallets.length / 2;
  return `
local wallets = {${wallets.map(luaString).join(',')}}
local sources = ${sources}
local hot = ${options.hot ? 'true' : 'false'}
local idempotency = ${options.idempotency ? 'true' : 'false'}
local tag = ${luaString(options.tag)}
local authorization = ${luaString(`Bearer ${apiKey}`)}
local threads = {}
local count = 0
function setup(thread)
  thread:set("id", count)
  count = count + 1
  table.insert(threads, thread)
end
local n = 0
function init(args)
  n = 0
  stride = tonumber(args[1])
end
function request()
  local i = n * stride + id
  n = n + 1
  local src, dst
  if hot then src = 0; dst = sources + (i % sources) else src = i % sources; dst = sources + src end
  -- wrk.format uses these headers instead of wrk.headers (-H), so the key is set here.
  local headers = { ["content-type"] = "application/json", ["authorization"] = authorization }
  if idempotency then headers["idempotency-key"] = "bench-" .. tag .. "-" .. i end
  local body = '{"source":"' .. wallets[src + 1] .. '","destination":"' .. wallets[dst + 1] ..
    '","amount":"${TRANSFER_AMOUNT_TEXT}","currency":"${TRANSFER_CURRENCY}"}'
  return wrk.format("POST", "/v1/transfers", headers, body)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('${RESULT_MARK}{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
`;
}

interface WrkSummary {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
}

/** One bounded wrk run (duration only: wrk has no request count, so `--amount` uses autocannon). */
export async function driveTransfersWrk(
  wrk: string,
  api: Api,
  wallets: readonly string[],
  options: LoadOptions,
): Promise<RunResult> {
  const work = mkdtempSync(path.join(tmpdir(), 'mkoba-wrk-'));
  try {
    const scriptFile = path.join(work, 'transfers.lua');
    writeFileSync(scriptFile, wrkScript(api.apiKey, wallets, options));
    const threads = Math.min(WRK_THREADS_MAX, options.connections);
    const args = [
      '-t',
      String(threads),
      '-c',
      String(options.connections),
      '-d',
      `${options.durationS}s`,
      '--timeout',
      `${REQUEST_TIMEOUT_S}s`,
      '-s',
      scriptFile,
      api.origin,
      '--',
      String(threads),
    ];
    const { code, stdout, stderr } = await runBounded(wrk, args, process.env, options.timeMaxS * 1000);
    const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARK));
    if (code !== 0 || !line) throw new Error(`wrk exited with ${code}:\n${stderr}\n${stdout}`);
    const s = JSON.parse(line.slice(RESULT_MARK.length)) as WrkSummary;
    const failed = s.status + s.timeout + s.read + s.write + s.connect;
    const failures: Record<string, number> = {};
    if (s.status > 0) failures.http_4xx_5xx = s.status;
    if (s.timeout > 0) failures.timeouts = s.timeout;
    if (s.connect + s.read + s.write > 0) failures.connection_errors = s.connect + s.read + s.write;
    const transfers = Math.max(0, s.requests - failed);
    const durationS = s.durationUs / 1e6;
    return {
      transfers,
      durationS,
      transfersPerS: transfers / durationS,
      // wrk's percentiles cover every response, refused ones included (the table shows how many failed).
      p50Ms: s.p50Us / 1000,
      p99Ms: s.p99Us / 1000,
      failures,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
