/**
 * The sandbox rail's settlement statement for a period, built from the payouts and collections it carried
 * (with the mismatches an integrator asks for), in our own lines or in a partner's export format, ready to
 * import as a real rail's would be (reconciliationStatements.ts).
 */
import { stringify } from 'csv-stringify/sync';
import { DAY_MS } from '../../../domain/days.ts';
import type { Queryable } from '../../../store/store.ts';
import { PARTNER_STATEMENT_WRITERS } from '../domain/partnerStatementWriters.ts';
import {
  SANDBOX_STATEMENT_MISMATCHES,
  type SandboxStatementMismatch,
  sandboxStatementLines,
} from '../domain/sandboxStatements.ts';
import { findCarriedPayouts } from '../repository/reconciliation.ts';
import { checkStatementRail, dayStart } from './reconciliationStatements.ts';
import { checkStatementFormat, statementCoverage } from './statementFormats.ts';

export { SANDBOX_STATEMENT_MISMATCHES };

export interface SandboxStatementInput {
  rail: string;
  from: string;
  to: string;
  format?: string | undefined;
  mismatches?: readonly SandboxStatementMismatch[] | undefined;
}

/** The currency of a line for a payout the ledger never made, when the period carried nothing. */
const UNKNOWN_LINE_CURRENCY = {
  mkoba_json: 'KES',
  mpesa_org_statement: 'KES',
  momo_transaction_report: 'UGX',
  flutterwave_settlement: 'NGN',
} as const;

/**
 * The sandbox rail's statement for a period, ready to import (`POST /v1/reconciliation/statements`): our
 * own `lines`, and for a partner's format its export as CSV text in `content` (upload it as `text/csv`).
 */
export async function sandboxStatement(tx: Queryable, organizationId: string, input: SandboxStatementInput) {
  const rail = checkStatementRail(input.rail);
  const format = checkStatementFormat(input.format);
  const from = dayStart(input.from, 'from');
  const to = dayStart(input.to, 'to');
  // What the rail carried, not what the ledger still has to match: a real rail's statement knows nothing
  // of our matching. A partner's report covers its own rails and network.
  const carried = await findCarriedPayouts(
    tx,
    { organizationId, ...statementCoverage(format, rail) },
    from,
    new Date(to.getTime() + DAY_MS - 1),
  );
  const lines = sandboxStatementLines(
    carried,
    input.mismatches ?? [],
    input.to,
    UNKNOWN_LINE_CURRENCY[format],
  );
  // Our own lines carry no partner's echo of our id: the rail reference is theirs.
  const statement = {
    object: 'statement' as const,
    rail: input.rail,
    from: input.from,
    to: input.to,
    format,
    lines: lines.map(({ external_reference: _echo, ...line }) => line),
  };
  if (format === 'mkoba_json') return statement;
  const records = PARTNER_STATEMENT_WRITERS[format](lines);
  return { ...statement, content: stringify(records, { record_delimiter: 'windows' }) };
}
