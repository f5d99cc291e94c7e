import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../app/apiKeys.ts';
import type { Deps } from '../../app/deps.ts';
import {
  type FeeScheduleUpdateInput,
  forgetFeeSchedule,
  getCurrentFeeSchedule,
  getFeeScheduleVersion,
  listVersions,
  updateFeeSchedule,
} from '../../app/fees.ts';
import { type CreateTransferRequest, quoteTransfer, type TransferQuote } from '../../app/transfers.ts';
import { type FeeSchedule, feeRuleJson } from '../../domain/fees.ts';
import { formatAmount } from '../../domain/money.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { feeScheduleBodySchema } from '../feeSchemas.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  pageLimitSchema,
  transferCreateBodySchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';
import { governedWrite, pendingChangeResponse } from './changes.ts';

const TAGS = ['Fees'];

export function presentFeeSchedule(schedule: FeeSchedule) {
  return {
    object: 'fee_schedule',
    version: schedule.version,
    rules: schedule.rules.map(feeRuleJson),
    created_by: schedule.createdBy,
    created_at: schedule.createdAt.toISOString(),
  };
}

export function presentTransferQuote(quote: TransferQuote) {
  const money = (minor: bigint) => formatAmount(minor, quote.currency);
  return {
    object: 'transfer_quote',
    amount: money(quote.amountMinor),
    fee: money(quote.fee.feeMinor),
    total: money(quote.totalMinor),
    currency: quote.currency,
    rail: quote.rail,
    fee_schedule: { version: quote.fee.scheduleVersion, rule: quote.fee.rule },
  };
}

/** The fee schedule (read by any key, changed by admins) and transfer quotes. */
export function feeRoutes(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/fee-schedule',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getFeeSchedule',
        summary: 'Retrieve the current fee schedule',
        description:
          'The organization’s fee rules as they stand: one per rail and currency. Before any change it is version 1, with no rules: no fees.',
        tags: TAGS,
        security: BEARER_SECURITY,
        response: {
          200: { description: 'The current version.', $ref: 'FeeSchedule#' },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentFeeSchedule(await getCurrentFeeSchedule(deps, principalOf(request).organizationId)),
  );

  app.put<{ Body: FeeScheduleUpdateInput }>(
    '/v1/fee-schedule',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'updateFeeSchedule',
        summary: 'Replace the fee schedule',
        description:
          'Writes the rules as the next version, recorded as evidence (`fee_schedule.update`). New transfers are charged by it at once in this process and within 5 seconds everywhere; transfers made before keep the fee and version they were charged. Each rule is checked field by field: a fault is a 400 naming it (`rules.2.percent_bps`, `rules.1.tiers.0.up_to`), and a rail that does not carry the currency is `unsupported_by_rail`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: feeScheduleBodySchema,
        response: {
          200: { description: 'The new version.', headers: idempotentWriteHeaders, $ref: 'FeeSchedule#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const organizationId = principalOf(request).organizationId;
      const sent = await sendWrite(deps, request, reply, async (tx) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          { kind: 'fee_schedule', action: 'set', targetId: null, payload: request.body },
          async () => ({
            status: 200,
            body: presentFeeSchedule(
              await updateFeeSchedule(
                tx,
                deps,
                organizationId,
                request.body,
                actorIdOf(principalOf(request)),
                requestActor(request),
              ),
            ),
          }),
        ),
      );
      // Forgotten again once committed: a transfer racing the write may have cached the version before it.
      forgetFeeSchedule(deps, organizationId);
      return sent;
    },
  );

  app.get<{ Querystring: { limit: number; before_version?: number } }>(
    '/v1/fee-schedule/versions',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listFeeScheduleVersions',
        summary: 'List fee schedule versions',
        description: 'Newest first; page with `before_version` (the last version of the previous page).',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: pageLimitSchema('versions'),
            before_version: {
              type: 'integer',
              minimum: 1,
              description: 'Only versions below this one (the `next_cursor` of the previous page).',
            },
          },
        },
        response: {
          200: {
            description: 'A page of versions.',
            type: 'object',
            required: ['object', 'data', 'has_more', 'next_cursor'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'FeeSchedule#' } },
              has_more: { type: 'boolean' },
              next_cursor: {
                type: ['integer', 'null'],
                description: 'Pass as `before_version` for the next page.',
              },
            },
          },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const page = await listVersions(deps, principalOf(request).organizationId, {
        limit: request.query.limit,
        beforeVersion: request.query.before_version,
      });
      const last = page.data.at(-1);
      return {
        object: 'list',
        data: page.data.map(presentFeeSchedule),
        has_more: page.hasMore,
        next_cursor: page.hasMore && last ? last.version : null,
      };
    },
  );

  app.get<{ Params: { version: number } }>(
    '/v1/fee-schedule/versions/:version',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getFeeScheduleVersion',
        summary: 'Retrieve a fee schedule version',
        description: 'The version a transfer’s fee names (`fee_schedule.version` on a transfer or a quote).',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: {
          type: 'object',
          required: ['version'],
          properties: { version: { type: 'integer', minimum: 1, description: 'The fee schedule version.' } },
        },
        response: {
          200: { description: 'That version.', $ref: 'FeeSchedule#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentFeeSchedule(
        await getFeeScheduleVersion(deps, principalOf(request).organizationId, request.params.version),
      ),
  );

  app.post<{ Body: CreateTransferRequest }>(
    '/v1/transfers/quote',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'quoteTransfer',
        summary: 'Quote a transfer',
        description:
          'Takes the body of `POST /v1/transfers` and answers what that transfer would cost now, creating nothing: the amount, the fee of the organization’s current fee schedule, the total the source wallet is debited, and the schedule version and rule that decided the fee. The request is checked as a new transfer is (currency, destination, rail and its bounds; a fault is the same 400 or 404), but not its funds, compliance or policy. A read, so it needs only `read`; like every POST it honours `Idempotency-Key`: a retry with the same key and body answers the first quote again.',
        tags: ['Transfers', ...TAGS],
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: transferCreateBodySchema,
        response: {
          200: { description: 'The quote.', headers: idempotentWriteHeaders, $ref: 'TransferQuote#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(
        deps,
        request,
        reply,
        async (_tx, _organizationId, quote: TransferQuote) => ({
          status: 200,
          body: presentTransferQuote(quote),
        }),
        // Computed before the key's transaction opens: the fee schedule is read through the process cache,
        // as a new transfer reads it (on the embedded database a read inside that transaction would wait for it).
        (organizationId) => quoteTransfer(deps, organizationId, request.body),
      ),
  );
}
