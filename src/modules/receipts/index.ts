/**
 * Receipts: a completed transfer's receipt with its public code, as JSON, a printable page and a PDF, and the public check by code.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { receiptRoutes } from './routes/routes.ts';
import { receiptSchema } from './routes/schemas.ts';

export { receiptRoutes } from './routes/routes.ts';
export { receiptSchema } from './routes/schemas.ts';

/** The module's face on the HTTP edge. */
export const receiptsHttp: HttpModule = { schemas: [receiptSchema], routes: receiptRoutes };
