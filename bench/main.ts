/**
 * `npm run bench`: the transfer case (bench/transfers.ts), then the webhook case (bench/webhooks.ts), or the
 * ones named with --cases. The command line is checked once against every case's options.
 */
import { parseArgs } from 'node:util';
import { EXPLAIN_OPTIONS, EXPLAIN_USAGE, runExplainBench } from './explain.ts';
import { EXPORT_OPTIONS, EXPORT_USAGE, runExportBench } from './exports.ts';
import { FEES_OPTIONS, FEES_USAGE, runFeesBench } from './fees.ts';
import { benchDatabaseUrl, log, textOption } from './options.ts';
import { POLICY_OPTIONS, POLICY_USAGE, runPolicyBench } from './policy.ts';
import { runSavingsBench, SAVINGS_OPTIONS, SAVINGS_USAGE } from './savings.ts';
import { runScreeningBench, SCREENING_OPTIONS, SCREENING_USAGE } from './screening.ts';
import { runTransferBench, TRANSFER_OPTIONS, TRANSFER_USAGE } from './transfers.ts';
import { runWebhookBench, WEBHOOK_OPTIONS, WEBHOOK_USAGE } from './webhooks.ts';

const CASES = {
  transfers: runTransferBench,
  webhooks: runWebhookBench,
  explain: runExplainBench,
  screening: runScreeningBench,
  policy: runPolicyBench,
  export: runExportBench,
  fees: runFeesBench,
  savings: runSavingsBench,
} as const;
type Case = keyof typeof CASES;
/** The explain, screening, policy, export, fees and savings cases generate their own data; they run only when named. */
const DEFAULT_CASES: Case[] = ['transfers', 'webhooks'];

const USAGE = `Usage: npm run bench -- [options]

  --cases LIST         transfers,webhooks,explain,screening,policy,export,fees,savings (BENCH_CASES, default transfers,webhooks, in that order)

${TRANSFER_USAGE}
${WEBHOOK_USAGE}
${EXPLAIN_USAGE}
${SCREENING_USAGE}
${POLICY_USAGE}
${EXPORT_USAGE}
${FEES_USAGE}
${SAVINGS_USAGE}`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      ...TRANSFER_OPTIONS,
      ...WEBHOOK_OPTIONS,
      ...EXPLAIN_OPTIONS,
      ...SCREENING_OPTIONS,
      ...POLICY_OPTIONS,
      ...EXPORT_OPTIONS,
      ...FEES_OPTIONS,
      ...SAVINGS_OPTIONS,
      cases: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const cases = (textOption(values, 'cases') ?? process.env.BENCH_CASES ?? DEFAULT_CASES.join(','))
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  for (const name of cases) {
    if (!(name in CASES)) throw new Error(`unknown case '${name}' (${Object.keys(CASES).join(', ')})`);
  }
  const backends = textOption(values, 'backends') ?? process.env.BENCH_BACKENDS ?? 'pglite,postgres';
  if (backends.includes('postgres') && benchDatabaseUrl(values) === undefined) {
    log('PostgreSQL skipped: set BENCH_DATABASE_URL (or pass --database-url).');
  }
  let exitCode = 0;
  for (const name of cases as Case[]) {
    try {
      const code = await CASES[name](values);
      if (code !== 0 && exitCode === 0) exitCode = code;
    } catch (error) {
      log(`bench ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      exitCode = 1;
    }
  }
  return exitCode;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  },
);
