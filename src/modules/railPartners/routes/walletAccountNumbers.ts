/**
 * `POST` and `GET /v1/wallets/{id}/virtual-account`: the wallet's virtual account reference, and, where the
 * organization's active bank partner issues them (Flutterwave), the wallet's own bank account number from
 * that partner, asked for before the write's transaction (walletAccountNumbers.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { validationError } from '../../../domain/errors.ts';
import { foundById, retrieveByIdRoute } from '../../../http/readRoutes.ts';
import { accessByScope, preparedWrite, writeOperation } from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { createdOrFound } from '../../../http/writeRoutes.ts';
import { presentVirtualAccount, virtualAccountResponse } from '../../treasury/index.ts';
import { walletParams } from '../../wallets/index.ts';
import { railPartnerDirectory } from '../useCases/directory.ts';
import {
  ACCOUNT_EMAIL_LENGTH_MAX,
  getWalletAccounts,
  type PreparedWalletAccount,
  prepareWalletAccountNumber,
  recordWalletAccountNumber,
  type WalletAccountNumberInput,
  type WalletAccounts,
  type WalletPartnerAccount,
} from '../useCases/walletAccountNumbers.ts';

type Route = { Params: { id: string }; Body: WalletAccountNumberInput | undefined };

const body = {
  type: 'object',
  additionalProperties: false,
  properties: {
    bvn: {
      type: 'string',
      maxLength: 32,
      description:
        'The account holder’s Bank Verification Number (11 digits), required where the bank partner issues an account number (Flutterwave, NGN wallets). Sent to the partner only: never stored or returned.',
    },
    email: {
      type: 'string',
      maxLength: ACCOUNT_EMAIL_LENGTH_MAX,
      description: 'The account holder’s email address, required with `bvn`.',
    },
  },
} as const;

const response = {
  ...virtualAccountResponse,
  properties: {
    ...virtualAccountResponse.properties,
    account_number: {
      type: 'string',
      description:
        'The wallet’s own bank account number, where the bank partner issued one: payers send bank transfers to it.',
    },
    bank_name: { type: 'string', description: 'The bank that account number is at.' },
    partner: { type: 'string', description: 'The rail partner that issued it (`flutterwave`).' },
  },
} as const;

const presentPartnerAccount = (a: WalletPartnerAccount | undefined) =>
  a === undefined ? {} : { account_number: a.accountNumber, bank_name: a.bankName, partner: a.partner };

const presentWalletAccounts = ({ account, partnerAccount }: WalletAccounts) => ({
  ...presentVirtualAccount(account),
  ...presentPartnerAccount(partnerAccount),
});

const ACCESS = accessByScope(['Collections'], 'digital_banking');

function getWalletAccountsRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/wallets/:id/virtual-account', getWalletAccounts, presentWalletAccounts, {
    ...ACCESS.read,
    operationId: 'getVirtualAccount',
    summary: 'Retrieve a wallet’s virtual account reference',
    description:
      'A 404 until one was made with `POST`. With the wallet’s bank account number (`account_number`, `bank_name`, `partner`) where a partner issued one.',
    ...foundById(walletParams, response, 'The wallet’s reference.'),
  });
}

export const walletAccountNumberRoutes = routesInOrder(createWalletAccountsRoute, getWalletAccountsRoute);

function createWalletAccountsRoute(app: FastifyInstance, deps: Deps): void {
  app.post<Route>(
    '/v1/wallets/:id/virtual-account',
    {
      ...writeOperation({
        ...ACCESS.write,
        operationId: 'createVirtualAccount',
        summary: 'Give a wallet a virtual account reference',
        description:
          'The reference a payer quotes on a bank transfer so the deposit is credited to this wallet. Where the organization has an active bank partner that issues account numbers (Flutterwave, for NGN wallets), the wallet also gets its own bank account number there (`account_number`, `bank_name`); that needs the holder’s `bvn` and `email` (422 `validation_error` naming the field), asked for once, never stored or returned; 503 `rail_unavailable` when the partner could not be reached (nothing recorded; ask again). Made on the first call (201); later calls answer the same one (200) and ask the partner nothing.',
        params: walletParams,
        body,
        responses: createdOrFound(
          response,
          'The wallet’s reference, made now.',
          'The wallet’s reference, made before.',
        ),
      }),
      // The body is optional (a wallet no partner issues an account for takes none, as before): none is
      // `{}`. An unknown field is named alone, as on this route before it took fields.
      preValidation: async (request: { body: unknown }) => {
        request.body ??= {};
        const fields = typeof request.body === 'object' && request.body !== null ? request.body : {};
        const unknown = Object.keys(fields).find((field) => !(field in body.properties));
        if (unknown !== undefined) {
          throw validationError(unknown, `${unknown} is not a known field`, 'unknown_field');
        }
      },
    },
    preparedWrite<Route, PreparedWalletAccount>(
      deps,
      (organizationId, request) =>
        prepareWalletAccountNumber(
          deps,
          railPartnerDirectory(deps),
          organizationId,
          request.params.id,
          request.body,
        ),
      async (tx, organizationId, request, prepared) => {
        const { account, partnerAccount, created } = await recordWalletAccountNumber(
          tx,
          deps,
          organizationId,
          request.params.id,
          prepared,
        );
        return { status: created ? 201 : 200, body: presentWalletAccounts({ account, partnerAccount }) };
      },
    ),
  );
}
