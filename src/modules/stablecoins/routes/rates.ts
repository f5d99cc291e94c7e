/** The organization's conversion rates: read by any key, replaced whole by compliance (governed). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { CONVERSION_RATES_MAX } from '../../../domain/conversions.ts';
import { WRITE_PROBLEMS } from '../../../http/problems.ts';
import { makeFromBody } from '../../../http/routeEffects.ts';
import {
  closedObjectSchema,
  found,
  LIST_PROBLEMS,
  organizationOf,
  readOperation,
  withoutNotFound,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import {
  governedIdempotentWrite,
  pendingChangeResponse,
  proposedCreation,
} from '../../authorization/index.ts';
import { getConversionRates, putConversionRates } from '../useCases/conversionRates.ts';
import { presentRates } from './presenters.ts';
import { ACCESS, rateText } from './schemas.ts';

/** The whole table, one entry a direction. */
const ratesBody = closedObjectSchema(
  {
    rates: {
      type: 'array',
      maxItems: CONVERSION_RATES_MAX,
      items: closedObjectSchema(
        {
          from: { type: 'string', description: 'A currency code.' },
          to: { type: 'string', description: 'A currency code.' },
          rate: { type: 'string', description: rateText.description, examples: rateText.examples },
        },
        ['from', 'to', 'rate'],
      ),
    },
  },
  ['rates'],
);

function getConversionRatesRoute(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/conversion-rates',
    readOperation({
      ...ACCESS.read,
      operationId: 'getConversionRates',
      summary: 'Retrieve the conversion rates',
      description:
        'The rates quotes use. The sandbox starts with USD one to one with USDC and USDT and KES at 0.0077 (128.5 back); production starts with none.',
      responses: { 200: found('ConversionRates', 'The rates.') },
      problems: LIST_PROBLEMS,
    }),
    async (request) => presentRates(await getConversionRates(deps, organizationOf(request))),
  );
}

function setConversionRatesRoute(app: FastifyInstance, deps: Deps): void {
  app.put<{ Body: { rates: { from: string; to: string; rate: string }[] } }>(
    '/v1/conversion-rates',
    writeOperation({
      ...ACCESS.compliance,
      operationId: 'setConversionRates',
      summary: 'Replace the conversion rates',
      description:
        'Replaces the table whole: each entry converts between a fiat currency and a stablecoin, one way; the other way is its own entry (so the two may differ by a spread). Each pair whose rate changes gets a new rate version (the rate it replaced, who set it), recorded as evidence (`conversion.rates.update`, before and after); applies to the next quote, and a quote already given is executed only while its output is within the band of the rate in force. A rate moving more than the band (MKOBA_CONVERSION_RATE_BAND_BPS, 5 % by default) from the rate in force, or a pair’s first rate (outside the sandbox, or in the sandbox for a pair that had a rate before), needs a second member’s approval: a 202 with the pending change (rule `conversion_rate_band`), nothing changed until another `admin` or `compliance` member approves it (docs/APPROVALS.md). Removing a pair needs none. Needs the `compliance` scope.',
      body: ratesBody,
      responses: { 200: written('ConversionRates', 'The rates.'), 202: pendingChangeResponse },
      problems: withoutNotFound(WRITE_PROBLEMS),
    }),
    governedIdempotentWrite(
      deps,
      200,
      proposedCreation('conversion_rate', 'set'),
      makeFromBody(deps, putConversionRates, presentRates),
    ),
  );
}

export const conversionRateRoutes = routesInOrder(getConversionRatesRoute, setConversionRatesRoute);
