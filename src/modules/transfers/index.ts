/**
 * Transfers: payouts and internal transfers created through the ledger writer (the batch path that locks,
 * checks policy, limits, AML, pilot caps and route limits, and posts inside the transaction that moves the
 * money), moved by their rail's answers and the rail worker, approved, canceled, returned; quotes; rail
 * credits into wallets; the sandbox's driven changes. The transfer record and its state machine are the
 * core's vocabulary (src/domain/transfers.ts, src/domain/transferRecord.ts).
 * Other modules, the composition root and the edges import this file only.
 */

import type { HttpModule } from '../../http/httpModule.ts';
import { DOCUMENT_ONLY_SCHEMAS } from './routes/destinationSchemas.ts';
import { transferRoutes } from './routes/routes.ts';
import { sandboxRoutes } from './routes/sandbox.ts';
import { TRANSFER_SCHEMAS } from './routes/schemas.ts';
import { LedgerWriter } from './useCases/posting/writer.ts';

export {
  findTransfer,
  findTransferByRailReference,
  saveTransfer,
  TRANSFER_COLUMNS,
  transferFromRow,
} from './repository.ts';
export { transferDestinationSchema, transferEventDataSchema } from './routes/schemas.ts';
export { decideReviewedTransfer, TRANSFER_APPROVALS } from './useCases/approvals.ts';
export { LimitGuard } from './useCases/posting/limitGuard.ts';
export { LedgerWriter } from './useCases/posting/writer.ts';
export type { ChunkResult, TransferCommand } from './useCases/posting/writerCommands.ts';
export { creditFromRail, fundWallet, lockFundingAccounts } from './useCases/railCredits.ts';
export { checkTransferRequest } from './useCases/requests.ts';
export { applyStatusChange, lockTransfer } from './useCases/statusChanges.ts';
export { getTransfer, listTransfers, prepareTransfer } from './useCases/transfers.ts';
export {
  RAIL_CALL_TIMEOUT_MS,
  RAIL_CLAIM_LEASE_MS,
  RAIL_WORKER_INTERVAL_MS,
  type RailResolver,
  type RailWorkerLog,
  registryResolver,
  runRailWorkerOnce,
  stderrRailWorkerLog,
  withTimeout,
} from './workers.ts';

/** The module's face on the HTTP edge: its routes create through a writer with the process's lanes. */
export const transfersHttp: HttpModule = {
  schemas: TRANSFER_SCHEMAS,
  documentComponents: DOCUMENT_ONLY_SCHEMAS,
  routes: (app, deps, { ledgerWriterLanes }) =>
    transferRoutes(app, deps, new LedgerWriter(deps, ledgerWriterLanes)),
};

/** The sandbox's routes that drive a transfer as if its rail had answered. */
export const transfersSandboxHttp: HttpModule = { schemas: [], routes: sandboxRoutes, sandboxOnly: true };
