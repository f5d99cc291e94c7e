/** Wallets: created, changed, listed and read, and a wallet's balance now or as of an instant. */

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Currency } from '../../../domain/money.ts';
import { WALLET_STATUSES, type WalletStatus } from '../../../domain/wallets.ts';
import { enumFilter, foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import { changeById, makeFromBody } from '../../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
  found,
  organizationOf,
  readOperation,
  written,
} from '../../../http/routeKit.ts';
import { subjectEvidenceRoute } from '../../../http/routes/evidence.ts';
import { currencySchema, idParamsSchema, idSchema, metadataSchema } from '../../../http/schemas.ts';
import { writeRoute, writtenById } from '../../../http/writeRoutes.ts';
import {
  type CreateWalletInput,
  createWallet,
  getWallet,
  getWalletBalanceAsOf,
  listWallets,
  updateWallet,
  type WalletChange,
} from '../useCases/wallets.ts';
import { presentBalance, presentWallet } from './presenters.ts';
import { instantQuerySchema, walletCreateBodySchema } from './schemas.ts';

export const WALLET_TAGS = ['Wallets'];
const ACCESS = accessByScope(WALLET_TAGS);
/** The path parameters of a route on one wallet, `/v1/wallets/:id/…`. */
export const walletParams = idParamsSchema(ID_PREFIXES.wallet, 'Wallet id.');

function createWalletRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Body: CreateWalletInput }>(
    app,
    deps,
    'POST',
    '/v1/wallets',
    201,
    makeFromBody(deps, createWallet, presentWallet),
    {
      ...ACCESS.write,
      operationId: 'createWallet',
      summary: 'Create a wallet',
      description:
        'Creates a wallet of one currency for a customer of your organization, with zero balances. An `owner` of another organization is a 404.',
      body: walletCreateBodySchema,
      responses: { 201: written('Wallet', 'The wallet.') },
    },
  );
}

function updateWalletRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Params: { id: string }; Body: WalletChange }>(
    app,
    deps,
    'PATCH',
    '/v1/wallets/:id',
    200,
    changeById(deps, updateWallet, presentWallet),
    {
      ...ACCESS.write,
      operationId: 'updateWallet',
      summary: 'Update a wallet',
      description:
        'Replaces the wallet’s `metadata` (its owner and currency never change). A closed wallet is a 409 `wallet_not_active`; a frozen one may change, since metadata moves no money. Recorded as evidence (`wallet.update`: who, and digests of the old and new metadata); emits `wallet.updated`. Sending the metadata it has changes nothing and emits nothing.',
      body: closedObjectSchema({ metadata: metadataSchema }, ['metadata']),
      ...writtenById(walletParams, 'Wallet', 'The wallet.'),
    },
  );
}

function walletReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/wallets',
    access: ACCESS.read,
    present: presentWallet,
    list: {
      operationId: 'listWallets',
      summary: 'List wallets',
      description:
        'Newest first, with cursor pagination; filter by owner, currency, status and creation time.',
      ...pagedList('Wallet', 'A page of wallets.', ID_PREFIXES.wallet, {
        owner: idSchema(ID_PREFIXES.customer, 'Only wallets of this customer.'),
        currency: { ...currencySchema, description: 'Only wallets of this currency.' },
        status: enumFilter(WALLET_STATUSES, 'Only wallets in this status.'),
      }),
    },
    page: listWallets,
    filtersOf: ({
      owner,
      currency,
      status,
    }: {
      owner?: string;
      currency?: Currency;
      status?: WalletStatus;
    }) => ({
      ownerId: owner,
      currency,
      status,
    }),
    retrieve: {
      operationId: 'getWallet',
      summary: 'Retrieve a wallet',
      ...foundById(walletParams, 'Wallet', 'The wallet.'),
    },
    get: getWallet,
  });
}

function getWalletBalanceRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string }; Querystring: { as_of?: string } }>(
    '/v1/wallets/:id/balance',
    readOperation({
      ...ACCESS.read,
      operationId: 'getWalletBalance',
      summary: "Retrieve a wallet's balance",
      description:
        '`available` = `current` − `pending`; all three are decimal strings in the wallet currency. With `as_of`, the balances as they were at that instant, exactly: what entries created strictly before it posted and held (the same rule as a statement’s `closing_balance`); `as_of` later than now is a 400.',
      params: walletParams,
      querystring: closedObjectSchema({
        as_of: instantQuerySchema(
          'A time (RFC 3339 with its offset, to the millisecond) or a date (`2026-11-30`: the end of that UTC day).',
        ),
      }),
      responses: { 200: found('Balance', 'The balance.') },
    }),
    async (request) => {
      const organizationId = organizationOf(request);
      if (request.query.as_of === undefined) {
        return presentBalance(await getWallet(deps, organizationId, request.params.id));
      }
      const { wallet, balances, asOf } = await getWalletBalanceAsOf(
        deps,
        organizationId,
        request.params.id,
        request.query.as_of,
      );
      return { ...presentBalance({ ...wallet, ...balances }), as_of: asOf.toISOString() };
    },
  );
}

export function walletRoutes(app: FastifyInstance, deps: Deps): void {
  createWalletRoute(app, deps);
  updateWalletRoute(app, deps);
  walletReadRoutes(app, deps);
  getWalletBalanceRoute(app, deps);
  subjectEvidenceRoute(app, deps, {
    subject: 'wallet',
    path: '/v1/wallets/:id/evidence',
    prefix: ID_PREFIXES.wallet,
    operationId: 'listWalletEvidence',
    requireSubject: getWallet,
  });
}
