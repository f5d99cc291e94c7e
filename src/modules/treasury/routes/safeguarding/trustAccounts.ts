/** Trust accounts (admins): configured, listed and read, closed; configuring and closing are governed. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../../app/deps.ts';
import { ID_PREFIXES } from '../../../../domain/ids.ts';
import type { Currency } from '../../../../domain/money.ts';
import { enumFilter, foundById, listAndRetrieveRoutes, pagedList } from '../../../../http/readRoutes.ts';
import { actOnId, makeFromBody } from '../../../../http/routeEffects.ts';
import { writeOperation, written } from '../../../../http/routeKit.ts';
import { routesInOrder } from '../../../../http/routeOrder.ts';
import { currencySchema, daySchema, idParamsSchema } from '../../../../http/schemas.ts';
import {
  governedIdempotentWrite,
  pendingChangeResponse,
  proposedChangeOfId,
  proposedCreation,
} from '../../../authorization/index.ts';
import { textSchema } from '../../../compliance/index.ts';
import {
  TRUST_ACCOUNT_FIELD_LENGTH_MAX,
  TRUST_ACCOUNT_STATUSES,
  TRUST_ACCOUNT_TYPES,
  type TrustAccountStatus,
  type TrustAccountType,
} from '../../domain/safeguarding.ts';
import {
  type CreateTrustAccountInput,
  closeTrustAccountFor,
  createTrustAccount,
  getTrustAccount,
  listOrganizationTrustAccounts,
} from '../../useCases/trustAccounts.ts';
import { presentTrustAccount } from './presenters.ts';
import { ACCESS, currencyFilter, trustAccountTypeSchema } from './schemas.ts';

const accountParams = idParamsSchema(ID_PREFIXES.trustAccount, 'Trust account id.');

// The bodies are spelled out: the published document lists `required` before `additionalProperties` in them.
const createTrustAccountBody = {
  type: 'object',
  required: ['currency', 'bank', 'account_reference'],
  additionalProperties: false,
  properties: {
    currency: currencySchema,
    type: {
      ...trustAccountTypeSchema,
      description: `${trustAccountTypeSchema.description} Follows from the currency when left out.`,
    },
    bank: textSchema(
      TRUST_ACCOUNT_FIELD_LENGTH_MAX,
      'The bank holding it (for a `custody_wallet`, the custodian).',
    ),
    account_reference: textSchema(
      TRUST_ACCOUNT_FIELD_LENGTH_MAX,
      'The account’s number or reference at the bank.',
    ),
    active_from: daySchema('The first day its closing balance counts; today (UTC) when left out.'),
  },
};

const closeTrustAccountBody = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: ['closed'] } },
};

function createTrustAccountRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: CreateTrustAccountInput }>(
    '/v1/trust-accounts',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'createTrustAccount',
      summary: 'Configure a trust account',
      description:
        'Names an account holding the organization’s customer money in one currency: a bank account, or for USDC and USDT a custodian’s wallet (`type`, which follows from the currency when left out; another is a 400 naming `type`). From `active_from` (today, UTC, by default) its closing balance counts in the daily safeguarding check, which covers the organization from its first trust account on. An active account with the same bank and reference is a 409 `trust_account_exists`. Recorded as evidence (`trust_account.update`).',
      body: createTrustAccountBody,
      responses: { 201: written('TrustAccount', 'The trust account.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite(
      deps,
      201,
      proposedCreation('trust_account', 'create'),
      makeFromBody(deps, createTrustAccount, presentTrustAccount),
    ),
  );
}

function trustAccountsReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/trust-accounts',
    access: ACCESS.admin,
    present: presentTrustAccount,
    list: {
      operationId: 'listTrustAccounts',
      summary: 'List trust accounts',
      description: 'Newest first, active and closed.',
      ...pagedList('TrustAccount', 'A page of trust accounts.', ID_PREFIXES.trustAccount, {
        currency: currencyFilter('Only accounts in this currency.'),
        status: enumFilter(TRUST_ACCOUNT_STATUSES, 'Only accounts in this status.'),
        type: enumFilter(TRUST_ACCOUNT_TYPES, 'Only accounts of this type.'),
      }),
    },
    page: listOrganizationTrustAccounts,
    filtersOf: (query: { currency?: Currency; status?: TrustAccountStatus; type?: TrustAccountType }) => ({
      currency: query.currency,
      status: query.status,
      type: query.type,
    }),
    retrieve: {
      operationId: 'getTrustAccount',
      summary: 'Retrieve a trust account',
      ...foundById(accountParams, 'TrustAccount', 'The trust account.'),
    },
    get: getTrustAccount,
  });
}

/** A close names the account in its path and says `status: closed` in its body. */
type CloseRoute = { Params: { id: string }; Body: { status: 'closed' } };

function closeTrustAccountRoute(app: FastifyInstance, deps: Deps): void {
  app.patch<CloseRoute>(
    '/v1/trust-accounts/:id',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'updateTrustAccount',
      summary: 'Close a trust account',
      description:
        '`status: closed` closes it today (UTC): from today its balance no longer counts; the days before still need theirs. A closed account is a 409 `invalid_state_transition`. Recorded as evidence (`trust_account.update`).',
      params: accountParams,
      body: closeTrustAccountBody,
      responses: { 200: written('TrustAccount', 'The trust account.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite<CloseRoute>(
      deps,
      200,
      proposedChangeOfId('trust_account', 'close'),
      actOnId(deps, closeTrustAccountFor, presentTrustAccount),
    ),
  );
}

/** Trust accounts, in the order the document lists them. */
export const trustAccountRoutes = routesInOrder(
  createTrustAccountRoute,
  trustAccountsReadRoutes,
  closeTrustAccountRoute,
);
