/**
 * `mkoba launch-gates list --organization NAME` and `mkoba launch-gates override --organization NAME
 * --reason TEXT [--gate GATE]... [--product PRODUCT]...` (docs/GOING-LIVE.md).
 */
import type { AdminCommand, AdminResult, LaunchGateLine } from '../app/admin.ts';
import { LAUNCH_PRODUCTS, type LaunchProduct } from '../domain/organizationProfile.ts';
import { LAUNCH_GATES, type LaunchGate } from '../modules/launchGates/index.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };
type RunAdmin = (command: AdminCommand) => Promise<AdminResult>;

/** `--gate a --gate b` and `--gate a,b` alike, each one of `allowed`. */
function listOf<T extends string>(
  flag: string,
  values: readonly string[] | undefined,
  allowed: readonly T[],
): T[] | undefined {
  if (values === undefined) return undefined;
  const items = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = items.filter((v) => !(allowed as readonly string[]).includes(v));
  if (items.length === 0 || unknown.length > 0) {
    throw new UsageError(`--${flag} takes ${allowed.join(', ')}; got '${values.join(',')}'`);
  }
  return items as T[];
}

/** What a gate line says beyond its state: what is missing, the override's reason, or its evidence record. */
function detailOf(g: LaunchGateLine): string {
  if (g.overrideReason !== null && g.state === 'overridden') return `overridden: ${g.overrideReason}`;
  const missing = (g.evidence as { missing?: unknown }).missing;
  if (g.state === 'open' && Array.isArray(missing)) return `missing: ${missing.join(', ')}`;
  return g.evidenceRecord ?? '';
}

function printGates(gates: readonly LaunchGateLine[], io: Io): void {
  for (const g of gates) io.out(`${g.product}/${g.gate}\t${g.state}\t${g.updatedAt}\t${detailOf(g)}`);
}

export async function launchGatesCommand(
  sub: string | undefined,
  options: {
    organization: string | undefined;
    reason: string | undefined;
    gates: readonly string[] | undefined;
    products: readonly string[] | undefined;
  },
  io: Io,
  runAdmin: RunAdmin,
): Promise<number> {
  if (sub !== 'list' && sub !== 'override') {
    throw new UsageError(`unknown launch-gates command '${sub ?? ''}': use list or override`);
  }
  const organization = options.organization;
  if (!organization) throw new UsageError(`launch-gates ${sub} needs --organization NAME`);
  if (sub === 'list') {
    const result = await runAdmin({ name: 'launch-gates.list', organization });
    if (result.name !== 'launch-gates.list') return 1;
    printGates(result.gates, io);
    const open = result.gates.filter((g) => g.state === 'open').length;
    io.err(`${organization}: ${open} of ${result.gates.length} launch gate(s) open`);
    return 0;
  }
  if (!options.reason)
    throw new UsageError('launch-gates override needs --reason TEXT (recorded as evidence)');
  const result = await runAdmin({
    name: 'launch-gates.override',
    organization,
    reason: options.reason,
    gates: listOf<LaunchGate>('gate', options.gates, LAUNCH_GATES),
    products: listOf<LaunchProduct>('product', options.products, LAUNCH_PRODUCTS),
  });
  if (result.name !== 'launch-gates.override') return 1;
  if (result.pending) {
    io.err(
      `the organization's policy governs overrides: change ${result.pending.change} waits for approval ${result.pending.approval} by its members; nothing is overridden until it is approved`,
    );
    return 0;
  }
  printGates(result.overridden, io);
  io.err(
    result.overridden.length > 0
      ? `overrode ${result.overridden.length} launch gate(s) of ${organization} (${result.organizationId}); recorded as evidence`
      : `nothing to override: no open launch gate of ${organization} matches`,
  );
  return 0;
}
