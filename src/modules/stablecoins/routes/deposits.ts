/** Deposits in: a wallet's deposit address on a network (issued once, listed), and the deposits seen on chain. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import type { DigitalAssetNetwork } from '../../../domain/digitalAssets.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { DEPOSIT_STATUSES, type DepositStatus } from '../../../domain/stablecoins.ts';
import {
  enumFilter,
  foundById,
  listAndRetrieveRoutes,
  pagedList,
  retrieveByIdRoute,
  statusAndWalletOf,
} from '../../../http/readRoutes.ts';
import {
  closedObjectSchema,
  preparedWrite,
  presentWholeList,
  wholeListSchema,
  writeOperation,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { digitalAssetNetworkSchema, idParamsSchema, idSchema } from '../../../http/schemas.ts';
import { createdOrFound } from '../../../http/writeRoutes.ts';
import { walletParams } from '../../wallets/index.ts';
import {
  issueDepositAddress,
  prepareDepositAddress,
  walletDepositAddresses,
} from '../useCases/depositAddresses.ts';
import { getDeposit, listOrganizationDeposits } from '../useCases/deposits.ts';
import { presentDeposit, presentDepositAddress } from './presenters.ts';
import { ACCESS } from './schemas.ts';

function createDepositAddressRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { network: DigitalAssetNetwork } }>(
    '/v1/wallets/:id/deposit-addresses',
    writeOperation({
      ...ACCESS.write,
      operationId: 'createDepositAddress',
      summary: 'Get a deposit address',
      description:
        'The wallet’s address on the network, issued on the first request (201) and the same one after (200). The wallet must hold USDC or USDT, and its asset’s route on the network must be enabled (422 `route_not_approved`). Where the organization has configured a custody partner (Fireblocks) the address is its vault account’s for the wallet (503 `service_unavailable` when the provider does not answer); otherwise the sandbox issues one on its simulated chain and pilot and production answer 422 `custody_not_configured`.',
      params: walletParams,
      body: closedObjectSchema({ network: digitalAssetNetworkSchema }, ['network']),
      responses: createdOrFound('DepositAddress', 'The address, issued now.', 'The address already issued.'),
    }),
    preparedWrite(
      deps,
      (organizationId, request) =>
        prepareDepositAddress(deps, organizationId, request.params.id, request.body.network),
      async (tx, organizationId, request, custodied) => {
        const { address, created } = await issueDepositAddress(
          tx,
          deps,
          organizationId,
          request.params.id,
          request.body.network,
          custodied,
        );
        return { status: created ? 201 : 200, body: presentDepositAddress(address) };
      },
    ),
  );
}

function listDepositAddressesRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(
    app,
    deps,
    '/v1/wallets/:id/deposit-addresses',
    walletDepositAddresses,
    (addresses) => presentWholeList(addresses, presentDepositAddress),
    {
      ...ACCESS.read,
      operationId: 'listDepositAddresses',
      summary: 'List a wallet’s deposit addresses',
      ...foundById(
        walletParams,
        wholeListSchema('DepositAddress'),
        'Every address issued for the wallet, oldest first.',
      ),
    },
  );
}

function depositsReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/deposits',
    access: ACCESS.read,
    present: presentDeposit,
    list: {
      operationId: 'listDeposits',
      summary: 'List deposits',
      description: 'Newest first.',
      ...pagedList('Deposit', 'A page of deposits.', ID_PREFIXES.deposit, {
        status: enumFilter(DEPOSIT_STATUSES, 'Only deposits in this status.'),
        wallet: idSchema(ID_PREFIXES.wallet, 'Only deposits to this wallet.'),
      }),
    },
    page: listOrganizationDeposits,
    filtersOf: statusAndWalletOf<DepositStatus>,
    retrieve: {
      operationId: 'getDeposit',
      summary: 'Retrieve a deposit',
      ...foundById(idParamsSchema(ID_PREFIXES.deposit, 'Deposit id.'), 'Deposit', 'The deposit.'),
    },
    get: getDeposit,
  });
}

/** A wallet's deposit addresses, then the deposits, in the order the document lists them. */
export const depositRoutes = routesInOrder(
  createDepositAddressRoute,
  listDepositAddressesRoute,
  depositsReadRoutes,
);
