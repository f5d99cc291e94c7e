/**
 * The policy case (`npm run bench -- --cases policy`): the authorization policy's evaluation, the pure step
 * the ledger writer runs for every transfer. A policy of the largest allowed size (POLICY_RULES_MAX rules,
 * every matcher kind in use) is parsed from its stored JSON, as each process does when its cache refreshes,
 * then transfers are decided against it, half of them falling through every rule to the default (the worst
 * case). Prints the parse time and the per-decision p50 and p99 as a Markdown table. No database.
 */
import { evaluatePolicy, POLICY_RULES_MAX, type Policy } from '../src/domain/decisions/policies.ts';
import { ruleJson, rulesFromStored } from '../src/domain/decisions/policyJson.ts';
import { type BenchValues, fixed, log, textOption, wholeNumber } from './options.ts';
import { percentile, seededRandom } from './stats.ts';

export const POLICY_USAGE = `Policy (authorization policy evaluation, in process):

  --policy-decisions N   transfers decided (BENCH_POLICY_DECISIONS, default 100000)
`;

export const POLICY_OPTIONS = { 'policy-decisions': { type: 'string' } } as const;

const DECISIONS_DEFAULT = 100_000;
const DECISIONS_MAX = 10_000_000;
const GENERATOR_SEED = 20_261_124;
const WALLET = 'wallet_01kb0p9a1b2c3d4e5f6g7h8j9k';

/** POLICY_RULES_MAX rules using every matcher; none matches an ordinary small payout. */
function largestPolicy(): unknown[] {
  const rules: unknown[] = [];
  for (let i = 0; i < POLICY_RULES_MAX; i++) {
    const kind = i % 5;
    const match =
      kind === 0
        ? { amount: [{ currency: 'KES', gte: `${1_000_000 + i}.00` }], rails: ['mobile_money', 'bank'] }
        : kind === 1
          ? { destination_types: ['card'], risk_levels: ['high'] }
          : kind === 2
            ? { kyc_statuses: ['rejected'], source_wallets: [WALLET] }
            : kind === 3
              ? { counterparty: 'new', amount: [{ currency: 'KES', gte: '500000.00' }] }
              : { aggregate: { window_seconds: 86_400, count_at_least: 1_000 + i } };
    rules.push({
      id: `rule_${i}`,
      match,
      action: i % 2 === 0 ? 'require_approval' : 'deny',
      ...(i % 2 === 0 ? { approval: { quorum: 2, roles: ['approver', 'admin'] } } : {}),
    });
  }
  return rules;
}

export async function runPolicyBench(values: BenchValues): Promise<number> {
  const decisions = wholeNumber(
    '--policy-decisions',
    textOption(values, 'policy-decisions') ?? process.env.BENCH_POLICY_DECISIONS,
    DECISIONS_DEFAULT,
    1,
    DECISIONS_MAX,
  );
  const stored = largestPolicy();
  const parseStarted = performance.now();
  const parsed = rulesFromStored(stored, { action: 'allow' });
  const parseMs = performance.now() - parseStarted;
  const policy: Policy = {
    organizationId: 'org_bench',
    version: 2,
    rules: parsed.rules,
    defaultRule: parsed.defaultRule,
    createdBy: 'system',
    approvalId: null,
    createdAt: new Date(),
  };
  // Stored again as the API shows it, so the round trip is exercised too.
  if (JSON.stringify(policy.rules.map(ruleJson)).length === 0) throw new Error('empty policy');
  const random = seededRandom(GENERATOR_SEED);
  const micros: number[] = [];
  let defaults = 0;
  const started = performance.now();
  for (let i = 0; i < decisions; i++) {
    const large = random() < 0.5;
    const begin = performance.now();
    const decision = evaluatePolicy(policy, {
      operation: 'transfer',
      facts: {
        amountMinor: large ? 2_000_000_00n : BigInt(Math.floor(random() * 10_000_00)),
        currency: 'KES',
        rail: 'mobile_money',
        destinationType: 'mobile_money',
        sourceWalletId: 'wallet_other',
        riskLevel: 'medium',
        kycStatus: 'verified',
        counterpartyKnown: true,
        outgoingWithin: () => ({ count: 3, sumMinor: 1_000_00n }),
      },
    });
    micros.push((performance.now() - begin) * 1_000);
    if (decision.rule === 'default') defaults++;
  }
  const totalMs = performance.now() - started;
  micros.sort((a, b) => a - b);
  log(`policy: ${POLICY_RULES_MAX} rules, ${decisions} decisions (${defaults} fell through to the default)`);
  process.stdout.write(
    [
      '| rules | parse ms | decisions | decisions/s | p50 µs | p99 µs |',
      '| ----: | -------: | --------: | ----------: | -----: | -----: |',
      `| ${POLICY_RULES_MAX} | ${fixed(parseMs, 2)} | ${decisions} | ${Math.round(decisions / (totalMs / 1_000))} | ${fixed(percentile(micros, 50), 2)} | ${fixed(percentile(micros, 99), 2)} |`,
      '',
    ].join('\n'),
  );
  return 0;
}
