/** The sandbox rail's settlement statement, ready to import into reconciliation. Not registered in production. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { idempotentWrite, SANDBOX_ACCESS, writeOperation, written } from '../../../http/routeKit.ts';
import { STATEMENT_FORMATS } from '../domain/partnerStatements.ts';
import { STATEMENT_DIRECTIONS } from '../domain/reconciliation.ts';
import {
  SANDBOX_STATEMENT_MISMATCHES,
  type SandboxStatementInput,
  sandboxStatement,
} from '../useCases/sandboxStatements.ts';
import { statementPeriodFields } from './reconciliation.ts';

const statementSchema = {
  type: 'object',
  required: ['object', 'rail', 'from', 'to', 'format', 'lines'],
  properties: {
    object: { type: 'string', enum: ['statement'] },
    rail: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    format: { type: 'string', enum: STATEMENT_FORMATS },
    content: {
      type: 'string',
      description: 'A partner’s export (CSV), for `format` other than `mkoba_json`: upload it as `text/csv`.',
    },
    lines: {
      type: 'array',
      description: 'The statement as our own lines (`mkoba_json`), whatever `format` asked for.',
      items: {
        type: 'object',
        properties: {
          rail_reference: { type: ['string', 'null'] },
          amount: { type: 'string' },
          currency: { type: 'string' },
          value_date: { type: 'string' },
          status: { type: 'string' },
          fees: { type: 'string' },
          direction: { type: 'string', enum: STATEMENT_DIRECTIONS },
        },
      },
    },
  },
} as const;

export function sandboxStatementRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: SandboxStatementInput }>(
    '/v1/sandbox/statements',
    writeOperation({
      ...SANDBOX_ACCESS.read,
      operationId: 'createSandboxStatement',
      summary: 'Produce a rail statement (sandbox)',
      description:
        'The sandbox rail’s settlement statement for a period: a line per payout and per collection (money in) it carried, whatever the ledger has matched since (one it left processing, the time-out number, and one returned later are reported settled; one refused before it reached the partner, with no rail reference, is not on it), ready to import with `POST /v1/reconciliation/statements`. `mismatches` adds deliberate differences, each applied to the next payout in turn: `amount` (one minor unit more), `fee` (a fee), `status` (a settled payout reported failed), `omit` (left out), `no_reference` (no rail reference: matched by amount and date), `unknown` (a line for a payout the ledger never made). `format` picks the form: `mkoba_json` (the default: `lines`, as the import takes them) or a partner’s export in `content` as its portal gives it, `mpesa_org_statement`, `momo_transaction_report` or `flutterwave_settlement` (that partner’s rails, network and direction only), to upload as `text/csv` with the same `format`.',
      body: {
        type: 'object',
        required: ['rail', 'from', 'to'],
        additionalProperties: false,
        properties: {
          ...statementPeriodFields,
          format: { type: 'string', enum: STATEMENT_FORMATS, description: 'Default `mkoba_json`.' },
          mismatches: {
            type: 'array',
            maxItems: 20,
            items: { type: 'string', enum: SANDBOX_STATEMENT_MISMATCHES },
          },
        },
      },
      responses: { 200: written(statementSchema, 'The statement, in the form the import takes.') },
    }),
    idempotentWrite(deps, 200, (tx, organizationId, request) =>
      sandboxStatement(tx, organizationId, request.body),
    ),
  );
}
