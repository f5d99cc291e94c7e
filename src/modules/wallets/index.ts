/**
 * Wallets: created for a customer in one currency, read with their balances (now or as of an instant) and
 * their account details, listed; frozen, unfrozen and closed, each change under the lock every movement
 * of the wallet takes. The wallet record and its statuses are the core's (src/domain/wallets.ts); a new
 * wallet's creating transaction runs the hooks other modules give it (`deps.walletCreatedHooks`).
 * Other modules, the composition root and the edges import this file only.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import type { HttpModule } from '../../http/httpModule.ts';
import { walletRoutes } from './routes/routes.ts';
import { WALLET_SCHEMAS } from './routes/schemas.ts';
import { walletStatusRoutes } from './routes/status.ts';

export {
  ACCOUNT_DETAILS_COLUMNS,
  ACCOUNT_DETAILS_JOIN,
  accountDetailsFromRow,
  findWallet,
  findWallets,
} from './repository.ts';
export { presentAccountDetails, presentAccountDetailsFields, presentWallet } from './routes/presenters.ts';
export { walletParams } from './routes/routes.ts';
export { accountDetailsProperties, instantQuerySchema } from './routes/schemas.ts';
export { findWalletIdentities } from './useCases/identities.ts';
export { changeWalletStatus } from './useCases/status.ts';
export { createWallet, getWallet, listWallets, requireWallet } from './useCases/wallets.ts';

/** The module's face on the HTTP edge: the wallet routes and the status changes. */
export const walletsHttp: HttpModule = {
  schemas: WALLET_SCHEMAS,
  routes(app: FastifyInstance, deps: Deps) {
    walletRoutes(app, deps);
    walletStatusRoutes(app, deps);
  },
};
