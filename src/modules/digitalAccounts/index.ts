/**
 * Digital accounts: the organization's sponsor-bank setting, the account details (account number with its
 * check digit) and virtual account reference a wallet is given so outsiders can pay into it, and statements.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { digitalAccountRoutes } from './routes/routes.ts';
import { DIGITAL_ACCOUNT_SCHEMAS } from './routes/schemas.ts';

export { isValidAccountNumber, isValidVirtualAccountReference } from './domain.ts';
export {
  findVirtualAccountByReference,
  findWalletIdByAccountNumber,
  type VirtualAccount,
} from './repository.ts';
export { presentStatement, statementCsv, statementFileName } from './routes/schemas.ts';
export {
  digitalAccountsOnWalletCreated,
  ensureAccountDetails,
  ensureVirtualAccount,
  getVirtualAccount,
  getWalletStatement,
  putDigitalAccountSettings,
} from './useCases.ts';

/** The module's face on the HTTP edge. */
export const digitalAccountsHttp: HttpModule = {
  schemas: DIGITAL_ACCOUNT_SCHEMAS,
  routes: digitalAccountRoutes,
};
