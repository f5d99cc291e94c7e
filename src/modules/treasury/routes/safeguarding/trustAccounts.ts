/** Trust accounts (admins): configured, listed and read, closed; configuring and closing are governed. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../../app/deps.ts';
import { ID_PREFIXES } from '../../../../domain/ids.ts';
import { type Currency, SUPPORTED_CURRENCIES } from '../../../../domain/money.ts';
import { requestActor } from '../../../../http/auth.ts';
import { textSchema } from '../../../../http/complianceSchemas.ts';
import { type ListQuery, pageRequestOf, presentList } from '../../../../http/presenters.ts';
import {
  found,
  LIST_PROBLEMS,
  organizationOf,
  readOperation,
  retrieveById,
  writeOperation,
  written,
} from '../../../../http/routeKit.ts';
import { governedIdempotentWrite, pendingChangeResponse } from '../../../../http/routes/changes.ts';
import {
  currencySchema,
  idParamsSchema,
  listEnvelopeSchema,
  listQuerySchema,
} from '../../../../http/schemas.ts';
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
import { dateSchema, TAGS, trustAccountTypeSchema } from './schemas.ts';

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
    active_from: dateSchema('The first day its closing balance counts; today (UTC) when left out.'),
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
      scope: 'admin',
      operationId: 'createTrustAccount',
      summary: 'Configure a trust account',
      description:
        'Names an account holding the organization’s customer money in one currency: a bank account, or for USDC and USDT a custodian’s wallet (`type`, which follows from the currency when left out; another is a 400 naming `type`). From `active_from` (today, UTC, by default) its closing balance counts in the daily safeguarding check, which covers the organization from its first trust account on. An active account with the same bank and reference is a 409 `trust_account_exists`. Recorded as evidence (`trust_account.update`).',
      tags: TAGS,
      body: createTrustAccountBody,
      responses: { 201: written('TrustAccount', 'The trust account.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite(
      deps,
      201,
      (request) => ({ kind: 'trust_account', action: 'create', targetId: null, payload: request.body }),
      async (tx, organizationId, request) =>
        presentTrustAccount(
          await createTrustAccount(tx, deps, organizationId, request.body, requestActor(request)),
        ),
    ),
  );
}

function listTrustAccountsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{
    Querystring: ListQuery & { currency?: Currency; status?: TrustAccountStatus; type?: TrustAccountType };
  }>(
    '/v1/trust-accounts',
    readOperation({
      scope: 'admin',
      operationId: 'listTrustAccounts',
      summary: 'List trust accounts',
      description: 'Newest first, active and closed.',
      tags: TAGS,
      querystring: listQuerySchema(ID_PREFIXES.trustAccount, {
        currency: {
          type: 'string',
          enum: SUPPORTED_CURRENCIES,
          description: 'Only accounts in this currency.',
        },
        status: {
          type: 'string',
          enum: TRUST_ACCOUNT_STATUSES,
          description: 'Only accounts in this status.',
        },
        type: { type: 'string', enum: TRUST_ACCOUNT_TYPES, description: 'Only accounts of this type.' },
      }),
      responses: { 200: listEnvelopeSchema('TrustAccount', 'A page of trust accounts.') },
      problems: LIST_PROBLEMS,
    }),
    async (request) =>
      presentList(
        await listOrganizationTrustAccounts(deps, organizationOf(request), {
          ...pageRequestOf(request.query),
          currency: request.query.currency,
          status: request.query.status,
          type: request.query.type,
        }),
        presentTrustAccount,
      ),
  );
}

function getTrustAccountRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string } }>(
    '/v1/trust-accounts/:id',
    readOperation({
      scope: 'admin',
      operationId: 'getTrustAccount',
      summary: 'Retrieve a trust account',
      tags: TAGS,
      params: accountParams,
      responses: { 200: found('TrustAccount', 'The trust account.') },
    }),
    retrieveById(deps, getTrustAccount, presentTrustAccount),
  );
}

function closeTrustAccountRoute(app: FastifyInstance, deps: Deps): void {
  app.patch<{ Params: { id: string }; Body: { status: 'closed' } }>(
    '/v1/trust-accounts/:id',
    writeOperation({
      scope: 'admin',
      operationId: 'updateTrustAccount',
      summary: 'Close a trust account',
      description:
        '`status: closed` closes it today (UTC): from today its balance no longer counts; the days before still need theirs. A closed account is a 409 `invalid_state_transition`. Recorded as evidence (`trust_account.update`).',
      tags: TAGS,
      params: accountParams,
      body: closeTrustAccountBody,
      responses: { 200: written('TrustAccount', 'The trust account.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite(
      deps,
      200,
      (request) => ({
        kind: 'trust_account',
        action: 'close',
        targetId: request.params.id,
        payload: request.body,
      }),
      async (tx, organizationId, request) =>
        presentTrustAccount(
          await closeTrustAccountFor(tx, deps, organizationId, request.params.id, requestActor(request)),
        ),
    ),
  );
}

/** Trust accounts, in the order the document lists them. */
export function trustAccountRoutes(app: FastifyInstance, deps: Deps): void {
  createTrustAccountRoute(app, deps);
  listTrustAccountsRoute(app, deps);
  getTrustAccountRoute(app, deps);
  closeTrustAccountRoute(app, deps);
}
