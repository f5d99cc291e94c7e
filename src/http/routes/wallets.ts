import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { getWalletBalanceAsOf } from '../../app/digitalAccounts.ts';
import {
  type CreateWalletInput,
  createWallet,
  getWallet,
  listWallets,
  updateWallet,
  type WalletChange,
} from '../../app/wallets.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Currency } from '../../domain/money.ts';
import { WALLET_STATUSES, type WalletStatus } from '../../domain/wallets.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { type ListQuery, pageRequestOf, presentBalance, presentList, presentWallet } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  currencySchema,
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  metadataSchema,
  walletCreateBodySchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Wallets'];
const walletParams = idParamsSchema(ID_PREFIXES.wallet, 'Wallet id.');

export function walletRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: CreateWalletInput }>(
    '/v1/wallets',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'createWallet',
        summary: 'Create a wallet',
        description:
          'Creates a wallet of one currency for a customer of your organization, with zero balances. An `owner` of another organization is a 404.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: walletCreateBodySchema,
        response: {
          201: { description: 'The wallet.', headers: idempotentWriteHeaders, $ref: 'Wallet#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 201,
        body: presentWallet(await createWallet(tx, deps, organizationId, request.body)),
      })),
  );

  app.patch<{ Params: { id: string }; Body: WalletChange }>(
    '/v1/wallets/:id',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'updateWallet',
        summary: 'Update a wallet',
        description:
          'Replaces the wallet’s `metadata` (its owner and currency never change). A closed wallet is a 409 `wallet_not_active`; a frozen one may change, since metadata moves no money. Recorded as evidence (`wallet.update`: who, and digests of the old and new metadata); emits `wallet.updated`. Sending the metadata it has changes nothing and emits nothing.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: walletParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['metadata'],
          properties: { metadata: metadataSchema },
        },
        response: {
          200: { description: 'The wallet.', headers: idempotentWriteHeaders, $ref: 'Wallet#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentWallet(
          await updateWallet(
            tx,
            deps,
            organizationId,
            request.params.id,
            request.body,
            requestActor(request),
          ),
        ),
      })),
  );

  app.get<{ Querystring: ListQuery & { owner?: string; currency?: Currency; status?: WalletStatus } }>(
    '/v1/wallets',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listWallets',
        summary: 'List wallets',
        description:
          'Newest first, with cursor pagination; filter by owner, currency, status and creation time.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.wallet, {
          owner: idSchema(ID_PREFIXES.customer, 'Only wallets of this customer.'),
          currency: { ...currencySchema, description: 'Only wallets of this currency.' },
          status: { type: 'string', enum: WALLET_STATUSES, description: 'Only wallets in this status.' },
        }),
        response: {
          200: listEnvelopeSchema('Wallet', 'A page of wallets.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const { owner, currency, status } = request.query;
      const page = await listWallets(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        ownerId: owner,
        currency,
        status,
      });
      return presentList(page, presentWallet);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/wallets/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getWallet',
        summary: 'Retrieve a wallet',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: walletParams,
        response: {
          200: { description: 'The wallet.', $ref: 'Wallet#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentWallet(await getWallet(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.get<{ Params: { id: string }; Querystring: { as_of?: string } }>(
    '/v1/wallets/:id/balance',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getWalletBalance',
        summary: "Retrieve a wallet's balance",
        description:
          '`available` = `current` − `pending`; all three are decimal strings in the wallet currency. With `as_of`, the balances as they were at that instant, exactly: what entries created strictly before it posted and held (the same rule as a statement’s `closing_balance`); `as_of` later than now is a 400.',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: walletParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            as_of: {
              type: 'string',
              minLength: 10,
              maxLength: 35,
              description:
                'A time (RFC 3339 with its offset, to the millisecond) or a date (`2026-11-30`: the end of that UTC day).',
            },
          },
        },
        response: {
          200: { description: 'The balance.', $ref: 'Balance#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
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
