/**
 * The sandbox's simulated chain: deposits to deposit addresses appear, the chain advances by blocks (each a
 * confirmation of every pending deposit on the network), and a reorganisation drops a deposit that is not
 * final yet. What happens next is the deposit worker's: credit after the confirmations, or drop. A
 * deposit to an address Fireblocks issued goes through the Fireblocks simulator instead, and arrives by
 * its webhook. Not registered in production.
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
  presentWholeList,
  sendingWrite,
  wholeListSchema,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  amountInputSchema,
  decimalStringSchema,
  digitalAssetNetworkSchema,
  idParamsSchema,
  idSchema,
} from '../../../http/schemas.ts';
import { createdOrFound } from '../../../http/writeRoutes.ts';
import { getTravelRuleSettings, travelRuleRequestSchema } from '../../compliance/index.ts';
import {
  advanceSandboxChain,
  type ChainDepositInput,
  recordChainDeposit,
  reorgSandboxDeposit,
  SANDBOX_CHAIN_ADVANCE_BLOCKS_MAX,
} from '../useCases/chainDeposits.ts';
import { type SandboxCustodyDeposit, sendSandboxCustodyDeposit } from '../useCases/sandboxCustodyDeposits.ts';
import { presentDeposit } from './presenters.ts';

/** The simulated chain's operations: a `write` key of an organization with stablecoins, in the sandbox. */
const SANDBOX = accessByScope(['Sandbox'], 'stablecoins');

const chainDepositBody = closedObjectSchema(
  {
    network: digitalAssetNetworkSchema,
    address: {
      type: 'string',
      maxLength: 128,
      description: 'One of your deposit addresses on the network.',
    },
    amount: amountInputSchema('Decimal string in the asset.'),
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

export const sandboxCustodyDepositSchema = apiObjectSchema(
  'SandboxCustodyDeposit',
  'sandbox_custody_deposit',
  'A deposit to a deposit address Fireblocks issued, sent on chain through the sandbox’s Fireblocks simulator. Fireblocks reports it (its webhook, or the service’s poll) once its own confirmations are in, and it then appears as a deposit (`deposit.detected`, then credited), as in production.',
  {
    partner: { type: 'string', enum: ['fireblocks'] },
    partner_reference: { type: 'string', description: 'Fireblocks’ transaction id.' },
    wallet: idSchema(ID_PREFIXES.wallet, 'The wallet the address is.'),
    asset: { type: 'string' },
    network: digitalAssetNetworkSchema,
    address: { type: 'string' },
    amount: decimalStringSchema('Decimal string in the asset.'),
    tx_hash: {
      type: 'string',
      description: 'The transaction on chain: the deposit’s `tx_hash` once recorded.',
    },
  },
);

const presentSandboxCustodyDeposit = (d: SandboxCustodyDeposit) => ({
  object: 'sandbox_custody_deposit',
  partner: d.partner,
  partner_reference: d.partnerReference,
  wallet: d.walletId,
  asset: d.asset,
  network: d.network,
  address: d.address,
  amount: d.amount,
  tx_hash: d.txHash,
});

function chainDepositRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: ChainDepositInput }>(
    '/v1/sandbox/chain/deposits',
    writeOperation({
      ...SANDBOX.write,
      operationId: 'sandboxChainDeposit',
      summary: 'Send a deposit on the simulated chain (sandbox)',
      description:
        'A transfer of the address’s asset to one of your deposit addresses appears on the simulated chain with `confirmations` (default 0): a `pending` deposit (`deposit.detected`, 201). The deposit worker credits it once it has its network’s confirmations (`POST /v1/sandbox/chain/advance`). The same `tx_hash` and `log_index` reported again for the same address and amount is the same deposit (200) and is credited once; `travel_rule` carries the originator’s data. To an address Fireblocks issued, the transfer goes through the sandbox’s Fireblocks simulator instead (202, a `SandboxCustodyDeposit`): the deposit appears once Fireblocks reports it, and `tx_hash`, `log_index`, `confirmations` and `travel_rule` are Fireblocks’ own (a 400 if given); a 409 `sandbox_simulators_off` without the simulators.',
      body: chainDepositBody,
      responses: {
        ...createdOrFound('Deposit', 'The deposit, new.', 'The deposit, reported before.'),
        202: written('SandboxCustodyDeposit', 'Sent through the Fireblocks simulator; the deposit follows.'),
      },
    }),
    sendingWrite(
      deps,
      // A custodied address's deposit is sent to the partner before the key's transaction (its webhook
      // comes back to this service), once the key is claimed.
      async (organizationId, request) => {
        const amountText = numberSourceOf(request.body, 'amount');
        const custody = await sendSandboxCustodyDeposit(deps, organizationId, request.body, amountText);
        if (custody) return { custody };
        return { settings: await getTravelRuleSettings(deps, organizationId) };
      },
      async (tx, organizationId, request, prepared) => {
        if (prepared.custody) return { status: 202, body: presentSandboxCustodyDeposit(prepared.custody) };
        const { settings } = prepared;
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
          network: digitalAssetNetworkSchema,
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

export const sandboxChainRoutes = routesInOrder(chainDepositRoute, chainAdvanceRoute, chainReorgRoute);
