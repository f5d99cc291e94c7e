/**
 * `mkoba subscriptions promote --organization NAME [--subscription ID]...` (docs/GOING-LIVE.md): copies
 * the organization's reviewed sandbox webhook subscriptions into this pilot or production deployment.
 */
import type { AdminCommand, AdminResult } from '../app/admin.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };

export async function subscriptionsCommand(
  sub: string | undefined,
  options: {
    organization: string | undefined;
    subscriptions: readonly string[] | undefined;
    operator: string;
  },
  io: Io,
  runAdmin: (command: AdminCommand) => Promise<AdminResult>,
): Promise<number> {
  if (sub !== 'promote') throw new UsageError(`unknown subscriptions command '${sub ?? ''}': use promote`);
  if (!options.organization) throw new UsageError('subscriptions promote needs --organization NAME');
  const subscriptions = options.subscriptions
    ?.flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const result = await runAdmin({
    name: 'subscriptions.promote',
    organization: options.organization,
    operator: options.operator,
    subscriptions,
  });
  if (result.name !== 'subscriptions.promote') return 1;
  // One line per subscription copied: its secret is shown here once, and never again.
  for (const p of result.promoted) {
    io.out(`${p.subscription}\t${p.url}\t${p.secret}\tfrom ${p.sandboxSubscription}`);
  }
  for (const s of result.skipped) io.err(`skipped ${s.sandboxSubscription} (${s.url}): ${s.reason}`);
  io.err(
    result.promoted.length > 0
      ? `promoted ${result.promoted.length} subscription(s) of ${options.organization} (${result.organizationId}); recorded as evidence ${result.evidenceRecord}. Each secret is shown only now: hand it to the organization`
      : `nothing promoted for ${options.organization}`,
  );
  return 0;
}
