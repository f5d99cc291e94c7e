/**
 * Digital accounts: the organization's sponsor-bank settings (admins change them), a wallet's account details
 * (what outsiders pay it by), and its statement of a period as JSON or CSV. A wallet's balance as of an
 * instant is `GET /v1/wallets/{id}/balance?as_of=…` (routes/wallets.ts).
 */

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { READ_PROBLEMS, WRITE_PROBLEMS } from '../../../http/problems.ts';
import { retrieveOwn } from '../../../http/readRoutes.ts';
import { makeFromBody } from '../../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
  createOrFindWrite,
  found,
  idempotentWrite,
  organizationOf,
  readOperation,
  withoutNotFound,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { createdOrFound } from '../../../http/writeRoutes.ts';
import { instantQuerySchema, presentAccountDetails, walletParams } from '../../wallets/index.ts';
import { STATEMENT_ENTRIES_MAX, STATEMENT_PERIOD_DAYS_MAX } from '../domain.ts';
import {
  ensureAccountDetails,
  getDigitalAccountSettings,
  getWalletStatement,
  putDigitalAccountSettings,
} from '../useCases.ts';
import {
  digitalAccountSettingsBodySchema,
  presentDigitalAccountSettings,
  presentStatement,
  STATEMENT_CSV_HEADER,
  statementCsv,
  statementFileName,
} from './schemas.ts';

const ACCESS = accessByScope(['Digital accounts'], 'digital_banking');

const STATEMENT_FORMATS = ['json', 'csv'] as const;
type StatementFormat = (typeof STATEMENT_FORMATS)[number];

/** `format` decides when given; otherwise `Accept`, where naming JSON keeps JSON. */
function statementFormatOf(request: FastifyRequest, format: StatementFormat | undefined): StatementFormat {
  if (format !== undefined) return format;
  const accept = request.headers.accept ?? '';
  if (accept.includes('application/json')) return 'json';
  if (accept.includes('text/csv')) return 'csv';
  return 'json';
}

function getSettingsRoute(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/digital-accounts/settings',
    readOperation({
      ...ACCESS.read,
      operationId: 'getDigitalAccountSettings',
      summary: 'Retrieve the digital-account settings',
      description:
        'The sponsor bank the organization issues account numbers under; `bank_code` null while none is set.',
      responses: { 200: found('DigitalAccountSettings', 'The settings.') },
      problems: withoutNotFound(READ_PROBLEMS),
    }),
    retrieveOwn(deps, getDigitalAccountSettings, presentDigitalAccountSettings),
  );
}

function setSettingsRoute(app: FastifyInstance, deps: Deps): void {
  app.put<{ Body: { bank_code: string; bank_name: string } }>(
    '/v1/digital-accounts/settings',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'setDigitalAccountSettings',
      summary: 'Set the digital-account settings',
      description:
        'The bank account numbers are issued under from now on (the `admin` scope). From then on every new wallet is given account details when it is created; a wallet made before gets them with `POST /v1/wallets/{id}/account-details`. Details already issued keep the bank they were issued under. Recorded as evidence (`digital_accounts.settings.update`, before and after).',
      body: digitalAccountSettingsBodySchema,
      responses: { 200: written('DigitalAccountSettings', 'The settings.') },
      problems: withoutNotFound(WRITE_PROBLEMS),
    }),
    idempotentWrite(deps, 200, makeFromBody(deps, putDigitalAccountSettings, presentDigitalAccountSettings)),
  );
}

function createAccountDetailsRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string } }>(
    '/v1/wallets/:id/account-details',
    writeOperation({
      ...ACCESS.write,
      operationId: 'createAccountDetails',
      summary: 'Give a wallet its account details',
      description:
        'Issues the wallet an account number (with its check digit) under the organization’s bank, and its virtual account reference if it has none: what outsiders pay it by, shown on the wallet as `account_details`. Made on the first call (201); later calls answer the same details (200). A wallet created after the settings were set has them already. 422 `digital_accounts_not_configured` while the organization has no settings; a closed wallet is a 409 `wallet_not_active`.',
      params: walletParams,
      responses: createdOrFound(
        'AccountDetails',
        'The wallet’s details, issued now.',
        'The wallet’s details, issued before.',
      ),
    }),
    createOrFindWrite(deps, async (tx, organizationId, request) => {
      const { details, created } = await ensureAccountDetails(tx, deps, organizationId, request.params.id);
      return { created, body: presentAccountDetails(details) };
    }),
  );
}

/** A statement's query string: its period, and the format when `Accept` is not to decide. */
const statementQuery = closedObjectSchema(
  {
    from: instantQuerySchema(
      'The start: a date (`2026-11-01`, its first instant, UTC) or a time (RFC 3339 with its offset).',
    ),
    to: instantQuerySchema(
      'The end, excluded: a date (`2026-11-30`, the end of that UTC day) or a time (RFC 3339 with its offset).',
    ),
    format: {
      type: 'string',
      enum: [...STATEMENT_FORMATS],
      description: 'JSON (default) or CSV; otherwise `Accept` decides.',
    },
  },
  ['from', 'to'],
);

/** A statement as JSON or as CSV. */
const statementFound = {
  description: 'The statement.',
  content: {
    'application/json': { schema: { $ref: 'WalletStatement#' } },
    'text/csv': {
      schema: {
        type: 'string',
        description: `RFC 4180 with a header row: \`${STATEMENT_CSV_HEADER.join(', ')}\`.`,
      },
    },
  },
};

function getWalletStatementRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string }; Querystring: { from: string; to: string; format?: StatementFormat } }>(
    '/v1/wallets/:id/statement',
    readOperation({
      ...ACCESS.read,
      operationId: 'getWalletStatement',
      summary: 'Retrieve a wallet’s statement',
      description: `The wallet's posted balance over a period: its balance at \`from\`, every entry that moved it in order (the time it was posted, the amount and fee, the balance after it, the transfer, the rail's reference, the counterparty, a description), and its balance at \`to\`. The period holds the entries created at or after \`from\` and strictly before \`to\`; a date names a UTC day, \`from\` its start and \`to\` its end, so \`from=2026-11-01&to=2026-11-30\` is November. A period not over yet ends now (\`complete\` false). Holds are not entries: a payout appears when it settles (its hold made final), and one that fails never appears. Read in one snapshot: a transfer committing meanwhile is in all of it or none of it. At most ${STATEMENT_PERIOD_DAYS_MAX} days (400 on \`to\`) and ${STATEMENT_ENTRIES_MAX} entries (422 \`statement_too_large\`). JSON by default; CSV with \`format=csv\` or \`Accept: text/csv\` (a header row, then \`opening\`, one \`entry\` row each, \`closing\`).`,
      params: walletParams,
      querystring: statementQuery,
      responses: { 200: statementFound },
      problems: [...READ_PROBLEMS, 422],
    }),
    async (request, reply) => {
      const { from, to, format } = request.query;
      const statement = await getWalletStatement(deps, organizationOf(request), request.params.id, from, to);
      if (statementFormatOf(request, format) === 'csv') {
        // The name is a wallet id and two compact times: nothing in it needs quoting.
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${statementFileName(statement)}"`)
          .send(statementCsv(statement));
      }
      return reply.type('application/json; charset=utf-8').send(presentStatement(statement));
    },
  );
}

export const digitalAccountRoutes = routesInOrder(
  getSettingsRoute,
  setSettingsRoute,
  createAccountDetailsRoute,
  getWalletStatementRoute,
);
