/**
 * Collections: money asked of a payer into a wallet (a mobile-money request-to-pay), moved by the rail's
 * answers and the collection worker, credited through the ledger seam; and the sandbox's funding route.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { collectionRoutes, collectionSchema } from './routes/collections.ts';
import { sandboxFundingRoutes } from './routes/sandbox.ts';

export {
  BANK_DEPOSITS_PER_REPORT_MAX,
  type Collection,
  isFinalCollection,
  succeededCollection,
} from './domain.ts';
export {
  findCollection,
  findCollectionByBankReference,
  findCollectionByPartnerReference,
  insertCollection,
  lockBankDepositReports,
} from './repository.ts';
export { presentCollection } from './routes/collections.ts';
export { collectionEventData, moveCollection, sandboxFunding } from './useCases.ts';
export {
  COLLECTION_WORKER_INTERVAL_MS,
  type CollectionRailResolver,
  partnerCollectionRail,
  runCollectionWorkerOnce,
  simulatedCollectionRail,
} from './workers.ts';

/** The module's face on the HTTP edge. */
export const collectionsHttp: HttpModule = { schemas: [collectionSchema], routes: collectionRoutes };

/** The sandbox's funding route: a wallet credited as if a payer's money had been collected. */
export const collectionsSandboxHttp: HttpModule = {
  schemas: [],
  routes: sandboxFundingRoutes,
  sandboxOnly: true,
};
