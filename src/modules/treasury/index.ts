/**
 * Treasury: where customer money is held and proven. Bank deposits to wallets' virtual accounts, rail
 * statements reconciled against the ledger (and the exception queue they open), trust accounts at banks and
 * custodians, sweeps between rail floats and trust, and the daily safeguarding check with its reports.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { reconciliationExceptionSchema, statementSchema } from './routes/reconciliation.ts';
import { treasuryRoutes } from './routes/routes.ts';
import { SAFEGUARDING_SCHEMAS, SAFEGUARDING_SWEEP_SCHEMAS } from './routes/safeguarding/schemas.ts';
import { sandboxStatementRoutes } from './routes/sandboxStatements.ts';

export { RESOLUTION_ACTIONS, type ResolutionAction } from './domain/reconciliation.ts';
export { EXCEPTION_COLUMNS, exceptionFromRow } from './repository/reconciliation.ts';
export { presentVirtualAccount, virtualAccountResponse } from './routes/bankDeposits.ts';
export { presentException } from './routes/reconciliationPresenters.ts';
export { normalizePayerReference, walletIdOfReference } from './useCases/bankDeposits.ts';
export {
  listReconciliationExceptions,
  openException,
  type ReconciliationException,
} from './useCases/reconciliationExceptions.ts';
export { resolveException } from './useCases/reconciliationResolutions.ts';
export {
  type CustodianBalanceInput,
  custodianAccountsAwaitingBalance,
  recordCustodianBalance,
} from './useCases/safeguardingBalances.ts';
export { closeTrustAccountFor, createTrustAccount } from './useCases/trustAccounts.ts';
export { recordSweep } from './useCases/trustLedger.ts';
export { runSafeguardingWorkerOnce, SAFEGUARDING_WORKER_INTERVAL_MS } from './workers.ts';

/** The module's face on the HTTP edge. */
export const treasuryHttp: HttpModule = {
  schemas: [
    statementSchema,
    reconciliationExceptionSchema,
    ...SAFEGUARDING_SCHEMAS,
    ...SAFEGUARDING_SWEEP_SCHEMAS,
  ],
  routes: treasuryRoutes,
};

/** The sandbox rails' settlement statements, ready to import. */
export const treasurySandboxHttp: HttpModule = {
  schemas: [],
  routes: sandboxStatementRoutes,
  sandboxOnly: true,
};
