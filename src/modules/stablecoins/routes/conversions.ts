/** Conversions between fiat and stablecoins (mint and redeem): quoted, then a quote executed; both read back. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { failureResult } from '../../../app/idempotency.ts';
import { CONVERSION_QUOTE_TTL_MS } from '../../../domain/conversions.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import { requestActorId } from '../../../http/auth.ts';
import { foundById, listAndRetrieveRoutes, pagedList, retrieveByIdRoute } from '../../../http/readRoutes.ts';
import { closedObjectSchema, preparedWrite, writeOperation, written } from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { amountInputSchema, idParamsSchema, idSchema } from '../../../http/schemas.ts';
import { createQuote, getQuote, prepareQuote, type QuoteInput } from '../useCases/conversionQuotes.ts';
import {
  executeQuote,
  getConversion,
  listOrganizationConversions,
  prepareConversion,
} from '../useCases/conversions.ts';
import { presentConversion, presentQuote } from './presenters.ts';
import { ACCESS } from './schemas.ts';

const quoteBody = closedObjectSchema(
  {
    from_wallet: idSchema(ID_PREFIXES.wallet, 'The wallet to debit.'),
    to_wallet: idSchema(ID_PREFIXES.wallet, 'The wallet to credit; the same customer’s.'),
    amount: amountInputSchema(
      'To debit, a decimal string in the source wallet’s currency (a JSON number is read exactly).',
    ),
  },
  ['from_wallet', 'to_wallet', 'amount'],
);

function createConversionQuoteRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: QuoteInput }>(
    '/v1/conversions/quote',
    writeOperation({
      ...ACCESS.write,
      operationId: 'createConversionQuote',
      summary: 'Quote a conversion',
      description: `Quotes converting \`amount\` (in the source wallet’s currency) from one of a customer’s wallets to another of theirs: fiat to USDC or USDT (mint) or back (redeem), at the organization’s rate, the credited amount rounded down to the minor unit, with the fee the organization’s fee schedule charges conversions from the source currency (rail \`conversion\`) on top. Valid for ${CONVERSION_QUOTE_TTL_MS / 1000} seconds. A pair without a rate is a 422 \`rate_unavailable\`.`,
      body: quoteBody,
      responses: { 201: written('ConversionQuote', 'The quote.') },
    }),
    preparedWrite(
      deps,
      (organizationId) => prepareQuote(deps, organizationId),
      async (tx, organizationId, request, fees) => ({
        status: 201,
        body: presentQuote(
          await createQuote(
            tx,
            deps,
            organizationId,
            request.body,
            fees,
            numberSourceOf(request.body, 'amount'),
          ),
        ),
      }),
    ),
  );
}

function getConversionQuoteRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/conversions/quotes/:id', getQuote, presentQuote, {
    ...ACCESS.read,
    operationId: 'getConversionQuote',
    summary: 'Retrieve a quote',
    ...foundById(idParamsSchema(ID_PREFIXES.conversionQuote, 'Quote id.'), 'ConversionQuote', 'The quote.'),
  });
}

function createConversionRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: { quote: string } }>(
    '/v1/conversions',
    writeOperation({
      ...ACCESS.write,
      operationId: 'createConversion',
      summary: 'Execute a quote',
      description:
        'Debits the source wallet (amount + fee) and credits the destination wallet by the quote’s amounts, in one transaction through the posting module, the fee to fee income. Decided as a transfer of the source amount is: the customer’s tier limits (a 422 `limit_exceeded` on `quote`, with `limit` and `remaining`) and the AML rules (`block` or `review`: a 422 `compliance_blocked`, its evidence and alerts recorded). Once per quote: a quote already executed is a 409; an expired one a 422 `quote_expired`; one whose credited amount is more than the band (5 % by default) from what the rate in force now gives a 422 `rate_out_of_band` (ask for a new quote), and one whose pair has no rate any more a 422 `rate_unavailable`; a source wallet without amount + fee available a 422 `insufficient_funds`; a frozen or closed one a 409 `wallet_not_active`. Nothing moves on a refusal.',
      body: closedObjectSchema({ quote: idSchema(ID_PREFIXES.conversionQuote, 'The quote to execute.') }, [
        'quote',
      ]),
      responses: { 201: written('Conversion', 'The conversion.') },
    }),
    preparedWrite(
      deps,
      (organizationId) => prepareConversion(deps, organizationId),
      async (tx, organizationId, request, amlRules) => {
        const outcome = await executeQuote(
          tx,
          deps,
          organizationId,
          request.body.quote,
          requestActorId(request),
          amlRules,
        );
        // A refusal by compliance commits its evidence and alerts, and is answered as the failure it is.
        return 'refused' in outcome
          ? failureResult(outcome.refused, request.id)
          : { status: 201, body: presentConversion(outcome.conversion) };
      },
    ),
  );
}

function conversionsReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/conversions',
    access: ACCESS.read,
    present: presentConversion,
    list: {
      operationId: 'listConversions',
      summary: 'List conversions',
      description: 'Newest first.',
      ...pagedList('Conversion', 'A page of conversions.', ID_PREFIXES.conversion),
    },
    page: listOrganizationConversions,
    retrieve: {
      operationId: 'getConversion',
      summary: 'Retrieve a conversion',
      ...foundById(idParamsSchema(ID_PREFIXES.conversion, 'Conversion id.'), 'Conversion', 'The conversion.'),
    },
    get: getConversion,
  });
}

/** Quotes and their execution, in the order the document lists them. */
export const conversionRoutes = routesInOrder(
  createConversionQuoteRoute,
  getConversionQuoteRoute,
  createConversionRoute,
  conversionsReadRoutes,
);
