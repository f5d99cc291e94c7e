/**
 * The sandbox's simulated chain: deposits to deposit addresses appear, the chain advances by blocks (each a
 * confirmation of every pending deposit on the network), and a reorganisation drops a deposit that is not
 * final yet. What happens next is the deposit worker's: credit after the confirmations, or drop. Not
 * registered in production.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import { LOG_INDEX_MAX, TRANSACTION_HASH_PATTERN } from '../../../domain/stablecoins.ts';
import { actOnId, makeFromBody } from '../../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
  idempotentWrite,
  preparedWrite,
  presentWholeList,
  wholeListSchema,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { idParamsSchema } from '../../../http/schemas.ts';
import { getTravelRuleSettings, travelRuleRequestSchema } from '../../compliance/index.ts';
import {
  advanceSandboxChain,
  type ChainDepositInput,
  recordChainDeposit,
  reorgSandboxDeposit,
  SANDBOX_CHAIN_ADVANCE_BLOCKS_MAX,
} from '../useCases/chainDeposits.ts';
import { presentDeposit } from './presenters.ts';
import { networkSchema } from './schemas.ts';

/** The simulated chain's operations: a `write` key of an organization with stablecoins, in the sandbox. */
const SANDBOX = accessByScope(['Sandbox'], 'stablecoins');

const chainDepositBody = closedObjectSchema(
  {
    network: networkSchema,
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
  ['network', 'address', 'amount'],
);

function chainDepositRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: ChainDepositInput }>(
    '/v1/sandbox/chain/deposits',
    writeOperation({
      ...SANDBOX.write,
      operationId: 'sandboxChainDeposit',
      summary: 'Send a deposit on the simulated chain (sandbox)',
      description:
        'A transfer of the address’s asset to one of your deposit addresses appears on the simulated chain with `confirmations` (default 0): a `pending` deposit (`deposit.detected`, 201). The deposit worker credits it once it has its network’s confirmations (`POST /v1/sandbox/chain/advance`). The same `tx_hash` and `log_index` reported again for the same address and amount is the same deposit (200) and is credited once; `travel_rule` carries the originator’s data.',
      body: chainDepositBody,
      responses: {
        200: written('Deposit', 'The deposit, reported before.'),
        201: written('Deposit', 'The deposit, new.'),
      },
    }),
    preparedWrite(
      deps,
      (organizationId) => getTravelRuleSettings(deps, organizationId),
      async (tx, organizationId, request, settings) => {
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
    ),
  );
}

function chainAdvanceRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: { network: string; blocks: number } }>(
    '/v1/sandbox/chain/advance',
    writeOperation({
      ...SANDBOX.write,
      operationId: 'sandboxChainAdvance',
      summary: 'Advance the simulated chain (sandbox)',
      description:
        'The network’s chain moves on by `blocks`: each pending deposit of yours on it that the chain still holds gains that many confirmations, and the deposit worker looks at it again.',
      body: closedObjectSchema(
        {
          network: networkSchema,
          blocks: { type: 'integer', minimum: 1, maximum: SANDBOX_CHAIN_ADVANCE_BLOCKS_MAX },
        },
        ['network', 'blocks'],
      ),
      responses: { 200: written(wholeListSchema('Deposit'), 'The deposits that gained confirmations.') },
    }),
    idempotentWrite(
      deps,
      200,
      makeFromBody(deps, advanceSandboxChain, (deposits) => presentWholeList(deposits, presentDeposit)),
    ),
  );
}

function chainReorgRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string } }>(
    '/v1/sandbox/chain/deposits/:id/reorg',
    writeOperation({
      ...SANDBOX.write,
      operationId: 'sandboxChainReorg',
      summary: 'Reorganise a deposit away (sandbox)',
      description:
        'A reorganisation of the simulated chain drops the deposit’s transaction before it is final: the deposit worker then marks it `reorged` (`deposit.reorged`) and it is never credited. A deposit that has its confirmations is final: a 409.',
      params: idParamsSchema(ID_PREFIXES.deposit, 'Deposit id.'),
      responses: { 200: written('Deposit', 'The deposit, its transaction dropped.') },
    }),
    idempotentWrite(deps, 200, actOnId(deps, reorgSandboxDeposit, presentDeposit)),
  );
}

export function sandboxChainRoutes(app: FastifyInstance, deps: Deps): void {
  chainDepositRoute(app, deps);
  chainAdvanceRoute(app, deps);
  chainReorgRoute(app, deps);
}
