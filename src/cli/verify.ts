/**
 * `mkoba ledger verify` and `mkoba evidence verify`: every ledger invariant, and every organization's evidence
 * hash chain, checked; each violation or broken chain is printed and makes the exit status 1.
 */
import type { Config } from '../config.ts';
import { runAdmin } from './runAdmin.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };

export async function ledgerCommand(sub: string | undefined, config: Config, io: Io): Promise<number> {
  if (sub !== 'verify') throw new UsageError(`unknown ledger command '${sub ?? ''}': use verify`);
  const result = await runAdmin(config, io, { name: 'ledger.verify' });
  if (result.name !== 'ledger.verify') return 1;
  for (const v of result.violations) io.out(`${v.invariant}: ${v.detail}`);
  if (result.violations.length > 0) {
    io.err(`ledger verify: ${result.violations.length} violation(s)`);
    return 1;
  }
  io.err('ledger verify: all invariants hold');
  return 0;
}

export async function evidenceCommand(sub: string | undefined, config: Config, io: Io): Promise<number> {
  if (sub !== 'verify') throw new UsageError(`unknown evidence command '${sub ?? ''}': use verify`);
  const result = await runAdmin(config, io, { name: 'evidence.verify' });
  if (result.name !== 'evidence.verify') return 1;
  const broken = result.chains.filter((c) => c.break);
  for (const chain of broken) {
    const at = chain.break;
    io.out(
      `${chain.organizationId}: broken at sequence ${at?.sequence}${at?.recordId ? ` (${at.recordId})` : ''}: ${at?.reason}`,
    );
  }
  const records = result.chains.reduce((n, c) => n + c.recordsVerified, 0);
  if (broken.length > 0) {
    io.err(`evidence verify: ${broken.length} of ${result.chains.length} chain(s) broken`);
    return 1;
  }
  io.err(`evidence verify: ${result.chains.length} chain(s), ${records} record(s), all intact`);
  return 0;
}
