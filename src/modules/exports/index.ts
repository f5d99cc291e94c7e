/**
 * Exports: jobs that write an organization's records page by page to a CSV or JSON Lines file, leased by workers, kept for a week.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { exportRoutes } from './routes/routes.ts';
import { exportSchema } from './routes/schemas.ts';

export {
  EXPORT_FORMATS,
  EXPORT_TYPES,
  type ExportFormat,
  type ExportType,
  OPERATOR_EXPORT_TYPES,
} from './domain.ts';
export { exportFormatters } from './routes/formats.ts';
export { presentExport } from './routes/presenters.ts';
export { exportRoutes } from './routes/routes.ts';
export { exportSchema } from './routes/schemas.ts';
export { createExport, getExport, listOrganizationExports, openExportFile } from './useCases/jobs.ts';
export { type ExportProgress, runExportNow, runExportWorkerOnce } from './useCases/run.ts';
export { EXPORT_WORKER_INTERVAL_MS } from './workers.ts';

/** The module's face on the HTTP edge. */
export const exportsHttp: HttpModule = { schemas: [exportSchema], routes: exportRoutes };
