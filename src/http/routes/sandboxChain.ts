/**
 * The sandbox's simulated chain: deposits to deposit addresses appear, the chain advances by blocks (each a
 * confirmation of every pending deposit on the network), and a reorganisation drops a deposit that is not
 * final yet. What happens next is the deposit worker's: credit after the confirmations, or drop. Not
 * registered in production.
 */
import type { FastifyInstance } from 'fastify';
import {
  advanceSandboxChain,
  type ChainDepositInput,
  recordChainDeposit,
  reorgSandboxDeposit,
  SANDBOX_CHAIN_ADVANCE_BLOCKS_MAX,
} from '../../app/deposits.ts';
import type { Deps } from '../../app/deps.ts';
import { getTravelRuleSettings, type TravelRuleSettingsView } from '../../app/travelRule.ts';
import { DIGITAL_ASSET_NETWORKS } from '../../domain/digitalAssets.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { numberSourceOf } from '../../domain/jsonNumbers.ts';
import { LOG_INDEX_MAX, TRANSACTION_HASH_PATTERN } from '../../domain/stablecoins.ts';
import { BEARER_SECURITY } from '../auth.ts';
import { problemResponses, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  travelRuleRequestSchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';
import { presentDeposit } from './stablecoins.ts';

const TAGS = ['Sandbox'];

export function sandboxChainRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: ChainDepositInput }>(
    '/v1/sandbox/chain/deposits',
    {
      config: { scope: 'write', product: 'stablecoins' },
      schema: {
        operationId: 'sandboxChainDeposit',
        summary: 'Send a deposit on the simulated chain (sandbox)',
        description:
          'A transfer of the address’s asset to one of your deposit addresses appears on the simulated chain with `confirmations` (default 0): a `pending` deposit (`deposit.detected`, 201). The deposit worker credits it once it has its network’s confirmations (`POST /v1/sandbox/chain/advance`). The same `tx_hash` and `log_index` reported again for the same address and amount is the same deposit (200) and is credited once; `travel_rule` carries the originator’s data.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['network', 'address', 'amount'],
          properties: {
            network: { type: 'string', enum: DIGITAL_ASSET_NETWORKS },
            address: {
              type: 'string',
              maxLength: 128,
              description: 'One of your deposit addresses on the network.',
            },
            amount: { type: ['string', 'number'], description: 'Decimal string in the asset.' },
            tx_hash: {
              type: 'string',
              pattern: TRANSACTION_HASH_PATTERN,
              description: 'The transaction; a new simulated hash when left out.',
            },
            log_index: { type: 'integer', minimum: 0, maximum: LOG_INDEX_MAX, description: 'Default 0.' },
            confirmations: { type: 'integer', minimum: 0, maximum: SANDBOX_CHAIN_ADVANCE_BLOCKS_MAX },
            travel_rule: {
              ...travelRuleRequestSchema,
              description:
                'The originator’s Travel Rule data as the sending institution passed it on: needed when the amount in USD reaches the threshold of the receiving customer’s jurisdiction; checked (a 400 naming each field) and kept as evidence. The beneficiary defaults to the wallet’s customer.',
            },
          },
        },
        response: {
          200: {
            description: 'The deposit, reported before.',
            headers: idempotentWriteHeaders,
            $ref: 'Deposit#',
          },
          201: { description: 'The deposit, new.', headers: idempotentWriteHeaders, $ref: 'Deposit#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite<TravelRuleSettingsView>(
        deps,
        request,
        reply,
        async (tx, organizationId, settings) => {
          const { deposit, created } = await recordChainDeposit(
            tx,
            deps,
            organizationId,
            request.body,
            settings,
            numberSourceOf(request.body, 'amount'),
          );
          return { status: created ? 201 : 200, body: presentDeposit(deposit) };
        },
        (organizationId) => getTravelRuleSettings(deps, organizationId),
      ),
  );

  app.post<{ Body: { network: string; blocks: number } }>(
    '/v1/sandbox/chain/advance',
    {
      config: { scope: 'write', product: 'stablecoins' },
      schema: {
        operationId: 'sandboxChainAdvance',
        summary: 'Advance the simulated chain (sandbox)',
        description:
          'The network’s chain moves on by `blocks`: each pending deposit of yours on it that the chain still holds gains that many confirmations, and the deposit worker looks at it again.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['network', 'blocks'],
          properties: {
            network: { type: 'string', enum: DIGITAL_ASSET_NETWORKS },
            blocks: { type: 'integer', minimum: 1, maximum: SANDBOX_CHAIN_ADVANCE_BLOCKS_MAX },
          },
        },
        response: {
          200: {
            description: 'The deposits that gained confirmations.',
            headers: idempotentWriteHeaders,
            type: 'object',
            required: ['object', 'data'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'Deposit#' } },
            },
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: {
          object: 'list',
          data: (await advanceSandboxChain(tx, deps, organizationId, request.body)).map(presentDeposit),
        },
      })),
  );

  app.post<{ Params: { id: string } }>(
    '/v1/sandbox/chain/deposits/:id/reorg',
    {
      config: { scope: 'write', product: 'stablecoins' },
      schema: {
        operationId: 'sandboxChainReorg',
        summary: 'Reorganise a deposit away (sandbox)',
        description:
          'A reorganisation of the simulated chain drops the deposit’s transaction before it is final: the deposit worker then marks it `reorged` (`deposit.reorged`) and it is never credited. A deposit that has its confirmations is final: a 409.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: idParamsSchema(ID_PREFIXES.deposit, 'Deposit id.'),
        response: {
          200: {
            description: 'The deposit, its transaction dropped.',
            headers: idempotentWriteHeaders,
            $ref: 'Deposit#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentDeposit(await reorgSandboxDeposit(tx, deps, organizationId, request.params.id)),
      })),
  );
}
