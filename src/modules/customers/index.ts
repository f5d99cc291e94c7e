/**
 * Customers: the individuals and businesses an organization serves (created, changed, listed), with the
 * compliance facts other capabilities read of them (KYC status, tier, risk level) and the facts an
 * authorization policy may ask of the customer who pays. The customer's vocabulary (types, KYC statuses,
 * risk levels, the change rules) is the core's, src/domain/customers.ts and src/domain/risk.ts.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { customerRoutes } from './routes/routes.ts';
import { CUSTOMER_SCHEMAS } from './routes/schemas.ts';

export { type Customer, findCustomer, saveCustomerCompliance } from './repository.ts';
export { presentCustomer } from './routes/presenters.ts';
export { postalAddressSchema } from './routes/schemas.ts';
export {
  type CreateCustomerInput,
  createCustomer,
  getCustomer,
  listCustomers,
  requireCustomer,
} from './useCases/customers.ts';
export { type CustomerPolicyFacts, readCustomerPolicyFacts } from './useCases/policyFacts.ts';

/** The module's face on the HTTP edge. */
export const customersHttp: HttpModule = { schemas: CUSTOMER_SCHEMAS, routes: customerRoutes };
