/**
 * Sweeps (operators: the `compliance` scope): money moved between a rail partner's float and the trust
 * account, recorded and posted to the ledger's trust account.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../../app/deps.ts';
import { ID_PREFIXES } from '../../../../domain/ids.ts';
import type { Currency } from '../../../../domain/money.ts';
import { foundById, listAndRetrieveRoutes, pagedList } from '../../../../http/readRoutes.ts';
import { recordFromBody } from '../../../../http/routeEffects.ts';
import { createOrFindWrite, writeOperation } from '../../../../http/routeKit.ts';
import { routesInOrder } from '../../../../http/routeOrder.ts';
import { currencySchema, daySchema, idParamsSchema, idSchema } from '../../../../http/schemas.ts';
import { createdOrFound } from '../../../../http/writeRoutes.ts';
import { textSchema } from '../../../compliance/index.ts';
import { SWEEP_REFERENCE_LENGTH_MAX } from '../../domain/trustLedger.ts';
import {
  getSweep,
  listOrganizationSweeps,
  type RecordSweepInput,
  recordSweep,
} from '../../useCases/trustLedger.ts';
import { presentSafeguardingSweep } from './presenters.ts';
import { ACCESS, currencyFilter, directionSchema, railSchema } from './schemas.ts';

// Spelled out: the published document lists `required` before `additionalProperties` in this body.
const recordSweepBody = {
  type: 'object',
  required: ['currency', 'rail', 'direction', 'amount', 'reference', 'value_date'],
  additionalProperties: false,
  properties: {
    currency: currencySchema,
    rail: railSchema,
    direction: directionSchema,
    amount: {
      type: 'string',
      maxLength: 40,
      description: 'A positive decimal string at the currency’s precision.',
      examples: ['250000.00'],
    },
    reference: textSchema(SWEEP_REFERENCE_LENGTH_MAX, 'The bank’s or partner’s reference of the movement.'),
    value_date: daySchema('The day the money moved.'),
    trust_account: idSchema(
      ID_PREFIXES.trustAccount,
      'The trust account that received or paid it, when there are several.',
    ),
  },
};

function recordSweepRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: RecordSweepInput }>(
    '/v1/safeguarding/sweeps',
    writeOperation({
      ...ACCESS.compliance,
      operationId: 'recordSafeguardingSweep',
      summary: 'Record a sweep between a rail’s float and the trust account',
      description:
        'Money moved at the banks between a rail partner’s float (e.g. the M-Pesa utility account) and the trust account, in either direction, posted at once as one balanced ledger entry: `to_trust` debits the currency’s `trust` account and credits the rail’s `rail_settlement` account, `from_trust` the reverse. `reference` identifies the movement: the same reference (rail and currency) with the same figures is a 200 with the recorded sweep; with other figures a 409 `duplicate_reference`. `value_date` is today (UTC) or earlier; a `trust_account`, if named, holds the currency and counts on that day. Event `safeguarding.sweep.recorded`; evidence `safeguarding.sweep`.',
      body: recordSweepBody,
      responses: createdOrFound(
        'SafeguardingSweep',
        'The sweep, recorded and posted.',
        'The same sweep was recorded before: the recorded one.',
      ),
    }),
    createOrFindWrite(
      deps,
      recordFromBody(deps, recordSweep, ({ sweep }) => presentSafeguardingSweep(sweep)),
    ),
  );
}

function sweepsReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/safeguarding/sweeps',
    access: ACCESS.compliance,
    present: presentSafeguardingSweep,
    list: {
      operationId: 'listSafeguardingSweeps',
      summary: 'List sweeps',
      description: 'Newest first.',
      ...pagedList('SafeguardingSweep', 'A page of sweeps.', ID_PREFIXES.safeguardingSweep, {
        currency: currencyFilter('Only sweeps in this currency.'),
      }),
    },
    page: listOrganizationSweeps,
    filtersOf: (query: { currency?: Currency }) => ({ currency: query.currency }),
    retrieve: {
      operationId: 'getSafeguardingSweep',
      summary: 'Retrieve a sweep',
      ...foundById(
        idParamsSchema(ID_PREFIXES.safeguardingSweep, 'Sweep id.'),
        'SafeguardingSweep',
        'The sweep.',
      ),
    },
    get: getSweep,
  });
}

export const safeguardingSweepRoutes = routesInOrder(recordSweepRoute, sweepsReadRoutes);
