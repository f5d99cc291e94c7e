/**
 * The sandbox rail's settlement statement for a period, built from the payouts it carried (with the
 * mismatches an integrator asks for), ready to import as a real rail's would be (reconciliationStatements.ts).
 */
import { DAY_MS } from '../../../domain/days.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  SANDBOX_STATEMENT_MISMATCHES,
  type SandboxStatementMismatch,
  sandboxStatementLines,
} from '../domain/sandboxStatements.ts';
import { findCarriedPayouts } from '../repository/reconciliation.ts';
import { checkStatementRail, dayStart } from './reconciliationStatements.ts';

export { SANDBOX_STATEMENT_MISMATCHES };

export interface SandboxStatementInput {
  rail: string;
  from: string;
  to: string;
  mismatches?: readonly SandboxStatementMismatch[] | undefined;
}

/** The sandbox rail's statement for a period, ready to import (`POST /v1/reconciliation/statements`). */
export async function sandboxStatement(tx: Queryable, organizationId: string, input: SandboxStatementInput) {
  checkStatementRail(input.rail);
  const from = dayStart(input.from, 'from');
  const to = dayStart(input.to, 'to');
  // What the rail carried, not what the ledger still has to match: a real rail's statement knows nothing
  // of our matching.
  const carried = await findCarriedPayouts(
    tx,
    organizationId,
    input.rail,
    from,
    new Date(to.getTime() + DAY_MS - 1),
  );
  return {
    object: 'statement' as const,
    rail: input.rail,
    from: input.from,
    to: input.to,
    lines: sandboxStatementLines(carried, input.mismatches ?? [], input.to),
  };
}
