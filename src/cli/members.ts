/**
 * `mkoba members add EMAIL --role ROLE [--role ROLE]`, `mkoba members list` and `mkoba members remove EMAIL`,
 * in the organization named by --organization (the sandbox's by default in the sandbox).
 */
import type { AdminCommand, AdminResult } from '../app/admin.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };
type RunAdmin = (command: AdminCommand) => Promise<AdminResult>;

/** `--role a --role b` and `--role a,b` alike. */
export function rolesOf(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((r) => r.trim())
    .filter(Boolean);
}

export async function membersCommand(
  sub: string | undefined,
  rest: readonly string[],
  options: { organization: string; roles: string[] },
  io: Io,
  runAdmin: RunAdmin,
): Promise<number> {
  if (sub === 'add') {
    const email = rest[0];
    if (!email) throw new UsageError('members add needs an EMAIL');
    if (options.roles.length === 0) {
      throw new UsageError('members add needs --role (initiator, approver, admin, compliance or viewer)');
    }
    const result = await runAdmin({
      name: 'members.add',
      organization: options.organization,
      email,
      roles: options.roles,
    });
    if (result.name !== 'members.add' || !result.member) return 1;
    io.err(`member ${result.member.email} (${result.member.roles.join(', ')}) in ${options.organization}`);
    io.out(result.member.id);
    return 0;
  }
  if (sub === 'list') {
    const result = await runAdmin({ name: 'members.list', organization: options.organization });
    if (result.name !== 'members.list') return 1;
    for (const m of result.members) io.out(`${m.id}\t${m.email}\t${m.roles.join(',')}\t${m.status}`);
    return 0;
  }
  if (sub === 'remove') {
    const email = rest[0];
    if (!email) throw new UsageError('members remove needs an EMAIL');
    const result = await runAdmin({ name: 'members.remove', organization: options.organization, email });
    if (result.name !== 'members.remove' || !result.member) {
      io.err(`no member ${email} in ${options.organization}`);
      return 1;
    }
    io.err(`removed ${result.member.email}: their keys no longer work`);
    return 0;
  }
  throw new UsageError(`unknown members command '${sub ?? ''}': use add, list or remove`);
}
