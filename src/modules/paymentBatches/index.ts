/**
 * Payment batches: a CSV or JSON list of payouts submitted, authorized, held and run chunk by chunk through the transfer writer, and canceled.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { paymentBatchRoutes } from './routes/routes.ts';
import { PAYMENT_BATCH_SCHEMAS } from './routes/schemas.ts';

export { isFinishedBatch, PAYMENT_BATCH_ITEM_STATUSES, type PaymentBatchItemStatus } from './domain.ts';
export { presentItem, presentPaymentBatch } from './routes/presenters.ts';
export { paymentBatchRoutes } from './routes/routes.ts';
export { PAYMENT_BATCH_SCHEMAS } from './routes/schemas.ts';
export {
  cancelPaymentBatch,
  getPaymentBatch,
  listBatches,
  listBatchItems,
  PAYMENT_BATCH_APPROVALS,
} from './useCases/batches.ts';
export { PAYMENT_BATCH_WORKER_INTERVAL_MS, runPaymentBatchPass } from './workers.ts';

/** The module's face on the HTTP edge. */
export const paymentBatchesHttp: HttpModule = { schemas: PAYMENT_BATCH_SCHEMAS, routes: paymentBatchRoutes };
