/**
 * The organization itself: its profile (the business customer whose KYB stands for it, the products it
 * launches) and the contacts it names, which the launch gates read; and the organization created by name
 * (the CLI's way in). Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { organizationRoutes, organizationSchema } from './routes.ts';

export { ensureOrganizationNamed, updateOrganizationProfile } from './useCases.ts';

/** The module's face on the HTTP edge. */
export const organizationHttp: HttpModule = { schemas: [organizationSchema], routes: organizationRoutes };
