/** Statements and the exception queue: operators only (the `compliance` scope). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { RAILS } from '../../../domain/transfers.ts';
import { requestActor, requestActorId } from '../../../http/auth.ts';
import { recordsOfCsvUpload, requiredUploadFields, rowsOfCsvUpload } from '../../../http/csvUpload.ts';
import {
  enumFilter,
  foundById,
  listAndRetrieveRoutes,
  pagedList,
  retrieveByIdRoute,
} from '../../../http/readRoutes.ts';
import { type BodyAndQuery, createFromRequest } from '../../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
  idempotentWrite,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  idParamsSchema,
  idSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
  transferRailSchema,
} from '../../../http/schemas.ts';
import { STATEMENT_FORMATS } from '../domain/partnerStatements.ts';
import {
  EXCEPTION_KINDS,
  type ExceptionKind,
  RECONCILIATION_STATEMENT_LINES_MAX,
  RESOLUTION_ACTIONS,
  STATEMENT_DIRECTIONS,
  STATEMENT_LINE_STATUSES,
} from '../domain/reconciliation.ts';
import { getException, listReconciliationExceptions } from '../useCases/reconciliationExceptions.ts';
import { type ResolveInput, resolveException } from '../useCases/reconciliationResolutions.ts';
import {
  getStatement,
  type ImportStatementInput,
  importStatement,
} from '../useCases/reconciliationStatements.ts';
import { PARTNER_PREAMBLE_ROWS_MAX } from '../useCases/statementFormats.ts';
import { presentException, presentStatement } from './reconciliationPresenters.ts';

const TAGS = ['Reconciliation'];
/** Statements and exceptions are operators' records: the `compliance` scope. */
const ACCESS = accessByScope(TAGS);
/** A statement upload may be this large (10,000 lines). */
export const STATEMENT_BODY_BYTES_MAX = 4 * 1024 * 1024;
/** An exception is open until an operator resolves it. */
const EXCEPTION_STATES = ['open', 'resolved'] as const;
const exceptionParams = idParamsSchema(ID_PREFIXES.reconciliationException, 'Exception id.');

export const statementSchema = {
  $id: 'Statement',
  type: 'object',
  required: [
    'object',
    'id',
    'rail',
    'from',
    'to',
    'lines',
    'matched',
    'exceptions',
    'created_by',
    'created_at',
  ],
  properties: {
    object: { type: 'string', enum: ['statement'] },
    id: idSchema(ID_PREFIXES.statement, 'Statement id.'),
    rail: transferRailSchema,
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    lines: { type: 'integer' },
    matched: { type: 'integer', description: 'Transfers matched by it.' },
    exceptions: { type: 'integer', description: 'Exceptions it opened.' },
    created_by: { type: 'string' },
    created_at: timestampSchema,
  },
} as const;

export const reconciliationExceptionSchema = apiObjectSchema(
  'ReconciliationException',
  'reconciliation_exception',
  'A difference between a statement and the ledger, for an operator: `unmatched_line` (the rail reports a payout, or money in, the ledger does not know), `amount_mismatch`, `fee_mismatch` (the rail charged a fee), `status_mismatch` (the rail says failed, the ledger settled, or the reverse), `missing_from_statement` (a settled transfer, payout or credit, the statement leaves out; money in says `direction: inbound` in `details`), `safeguarding_shortfall` (the daily safeguarding check found less in the trust accounts than customers hold) and `trust_balance_mismatch` (the banks’ trust balance differs from the ledger’s trust account that day), both resolved with `manual_match` and a note, and `unbooked_network_fee` (a custody partner’s transaction paid a network fee in an asset the ledger keeps no account for, such as ETH for a USDC transfer: `details` name the partner transaction, the payout’s `transfer_id` or the `custody_sweep_id`, `fee_asset` and `fee_amount`), resolved with `manual_match` and a note. `open` until resolved with an action.',
  {
    id: idSchema(ID_PREFIXES.reconciliationException, 'Exception id.'),
    kind: { type: 'string', enum: EXCEPTION_KINDS },
    status: { type: 'string', enum: EXCEPTION_STATES },
    transfer: { type: ['string', 'null'] },
    statement: { type: ['string', 'null'] },
    line: { type: ['integer', 'null'], description: 'The statement line (1-based).' },
    details: {
      type: 'object',
      additionalProperties: true,
      description: 'What differs (amounts in minor units).',
    },
    resolution: { type: ['string', 'null'], enum: [...RESOLUTION_ACTIONS, null] },
    note: { type: ['string', 'null'] },
    resolved_by: { type: ['string', 'null'] },
    journal_entry: nullableStringSchema('The adjustment entry a write-off or fee booked.'),
    created_at: timestampSchema,
    resolved_at: nullableTimestampSchema,
  },
);

const statementDaySchema = { type: 'string', description: 'YYYY-MM-DD' } as const;

/** A statement's rail and period, as an import and the sandbox's statements take them. */
export const statementPeriodFields = {
  rail: transferRailSchema,
  from: statementDaySchema,
  to: statementDaySchema,
} as const;

const lineSchema = {
  type: 'object',
  required: ['amount', 'currency', 'value_date', 'status'],
  properties: {
    rail_reference: { type: ['string', 'null'], maxLength: 100 },
    amount: { type: 'string' },
    currency: { type: 'string' },
    value_date: statementDaySchema,
    status: { type: 'string', enum: STATEMENT_LINE_STATUSES },
    fees: { type: 'string' },
    direction: {
      type: 'string',
      enum: STATEMENT_DIRECTIONS,
      description: '`outbound` (a payout, the default) or `inbound` (money in: a collection).',
    },
  },
} as const;

/** A statement as JSON, or as CSV with its rail and period in the query string. */
const statementBody = {
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['rail', 'from', 'to', 'lines'],
        additionalProperties: false,
        properties: {
          ...statementPeriodFields,
          lines: { type: 'array', maxItems: RECONCILIATION_STATEMENT_LINES_MAX, items: lineSchema },
        },
      },
    },
    'text/csv': {
      schema: {
        type: 'string',
        description:
          'The statement as CSV with a header row: our columns (`format=mkoba_json`), or a partner’s export as its portal gives it (`format=mpesa_org_statement`, `format=momo_transaction_report`), or a Flutterwave settlement’s transactions (`format=flutterwave_settlement`).',
      },
    },
  },
} as const;

/** The query string of a CSV upload: the statement's rail and period. */
interface StatementQuery {
  rail?: string;
  from?: string;
  to?: string;
  format?: string;
}

/** A statement as the request carries it: the JSON body, or the CSV upload's rows with the query's fields. */
function statementInputOf({
  body,
  query,
}: BodyAndQuery<ImportStatementInput | string, StatementQuery>): ImportStatementInput {
  const { format } = query;
  if (typeof body !== 'string') return { ...body, format };
  const fields = requiredUploadFields(query, ['rail', 'from', 'to']);
  // A partner's export is read as the partner wrote it (a preamble, its own column names).
  if (format !== undefined && format !== 'mkoba_json') {
    const records = recordsOfCsvUpload(
      body,
      RECONCILIATION_STATEMENT_LINES_MAX + PARTNER_PREAMBLE_ROWS_MAX + 1,
    );
    return { ...fields, format, records };
  }
  return { ...fields, format, lines: rowsOfCsvUpload(body, RECONCILIATION_STATEMENT_LINES_MAX) };
}

function importStatementRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: ImportStatementInput | string; Querystring: StatementQuery }>(
    '/v1/reconciliation/statements',
    {
      ...writeOperation({
        ...ACCESS.compliance,
        operationId: 'importStatement',
        summary: 'Import a rail statement',
        description:
          'JSON (`{rail, from, to, lines}`), or CSV (`text/csv`; columns `rail_reference, amount, currency, value_date, status, fees, direction`; `rail`, `from` and `to` in the query string). `format` in the query string names a partner’s own export instead, uploaded as CSV: `mpesa_org_statement` (Safaricom’s M-Pesa organization statement), `momo_transaction_report` (MTN MoMo’s transaction report) or `flutterwave_settlement` (a Flutterwave settlement’s transactions, one row each, columns named as `GET /v3/settlements/{id}` names them); those cover the partner’s rails (M-Pesa: `mobile_money` on the `mpesa` network, `paybill`, `till`; MoMo: `mobile_money` on `mtn`; Flutterwave: `bank`, money in only), `rail` being one of them. Lines are money out (payouts) or in (collections’ credits), each matched with its own direction. Every line is checked first (422 `statement_invalid` with each fault’s `row`); then lines are matched with transfers (by rail reference, then amount and date, then one line to several transfers), timed-out transfers are settled or failed as reported, matched transfers become `ledger_state: matched`, and each difference opens an exception. The same statement imported again is a 409 `statement_already_imported`.',
        querystring: closedObjectSchema({
          rail: { type: 'string', enum: RAILS, description: 'With a CSV upload: the rail.' },
          from: { type: 'string', description: 'With a CSV upload: the first day, YYYY-MM-DD.' },
          to: { type: 'string', description: 'With a CSV upload: the last day, YYYY-MM-DD.' },
          format: {
            type: 'string',
            enum: STATEMENT_FORMATS,
            description:
              'The statement’s format: `mkoba_json` (ours, the default), or a partner’s export uploaded as CSV: `mpesa_org_statement`, `momo_transaction_report`, `flutterwave_settlement`.',
          },
        }),
        body: statementBody,
        responses: { 201: written('Statement', 'The statement, applied.') },
        config: { acceptsCsv: true },
      }),
      bodyLimit: STATEMENT_BODY_BYTES_MAX,
    },
    idempotentWrite(deps, 201, createFromRequest(deps, statementInputOf, importStatement, presentStatement)),
  );
}

function getStatementRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/reconciliation/statements/:id', getStatement, presentStatement, {
    ...ACCESS.compliance,
    operationId: 'getStatement',
    summary: 'Retrieve an imported statement',
    ...foundById(idParamsSchema(ID_PREFIXES.statement, 'Statement id.'), 'Statement', 'The statement.'),
  });
}

function exceptionsReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/reconciliation/exceptions',
    access: ACCESS.compliance,
    present: presentException,
    list: {
      operationId: 'listReconciliationExceptions',
      summary: 'List reconciliation exceptions',
      description: 'Newest first; `status=open` is the queue.',
      ...pagedList('ReconciliationException', 'A page of exceptions.', ID_PREFIXES.reconciliationException, {
        status: enumFilter(EXCEPTION_STATES, 'Only exceptions in this state.'),
        kind: enumFilter(EXCEPTION_KINDS, 'Only exceptions of this kind.'),
        transfer: idSchema(ID_PREFIXES.transfer, 'Only the exceptions of this transfer.'),
      }),
    },
    page: listReconciliationExceptions,
    filtersOf: ({
      status,
      kind,
      transfer,
    }: {
      status?: (typeof EXCEPTION_STATES)[number];
      kind?: ExceptionKind;
      transfer?: string;
    }) => ({ status, kind, transferId: transfer }),
    retrieve: {
      operationId: 'getReconciliationException',
      summary: 'Retrieve a reconciliation exception',
      ...foundById(exceptionParams, 'ReconciliationException', 'The exception.'),
    },
    get: getException,
  });
}

function resolveExceptionRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: ResolveInput }>(
    '/v1/reconciliation/exceptions/:id/resolve',
    writeOperation({
      ...ACCESS.compliance,
      operationId: 'resolveReconciliationException',
      summary: 'Resolve a reconciliation exception',
      description:
        '`manual_match` (accept the pairing; for an unmatched line, name the `transfer` it pays), `write_off` (an amount difference or an unknown line, booked between the rail’s clearing account and its `reconciliation_adjustment` account), `book_fee` (the rail’s fee, booked to its `rail_fee` account), or `refund` (a transfer the rail says never went out goes back to the paying wallet). Each needs a `note`; each is recorded with who, as evidence. When a transfer’s last open exception is resolved it becomes `ledger_state: matched`. A resolved exception is a 409.',
      params: exceptionParams,
      body: {
        type: 'object',
        required: ['action', 'note'],
        additionalProperties: false,
        properties: {
          action: { type: 'string', enum: RESOLUTION_ACTIONS },
          note: { type: 'string', minLength: 1, maxLength: 1_000, description: 'Why.' },
          transfer: idSchema(
            ID_PREFIXES.transfer,
            'With manual_match of an unmatched line: the transfer it pays.',
          ),
        },
      },
      responses: { 200: written('ReconciliationException', 'The exception, resolved.') },
    }),
    idempotentWrite(deps, 200, async (tx, organizationId, request) =>
      presentException(
        await resolveException(
          tx,
          deps,
          organizationId,
          request.params.id,
          request.body,
          requestActor(request),
          requestActorId(request),
        ),
      ),
    ),
  );
}

export const reconciliationRoutes = routesInOrder(
  importStatementRoute,
  getStatementRoute,
  exceptionsReadRoutes,
  resolveExceptionRoute,
);
