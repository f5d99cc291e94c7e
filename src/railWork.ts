/**
 * The rail side of a process, beside the composition root (main.ts): the periodic passes that move money
 * through rail partners (payouts, collections, partners' callbacks, reversals, credit verification, custody
 * deposits, deposits), where a payout goes (its partner, or in the sandbox the simulated rails), and the
 * sandbox's partner simulators wired to the sandbox organization, with the feeds its sandbox routes send
 * money in through.
 */
import type { Deps, SandboxPartnerFeeds } from './app/deps.ts';
import { SANDBOX_ORGANIZATION_NAME } from './app/seed.ts';
import type { Config } from './config.ts';
import type { Environment } from './domain/access.ts';
import { resourceMissing } from './domain/errors.ts';
import { outboundPolicyFor } from './domain/outboundAddresses.ts';
import {
  COLLECTION_WORKER_INTERVAL_MS,
  type CollectionRailResolver,
  partnerCollectionRail,
  runCollectionWorkerOnce,
  simulatedCollectionRail,
} from './modules/collections/index.ts';
import {
  CUSTODY_DEPOSIT_POLL_INTERVAL_MS,
  CUSTODY_RESERVE_POLL_INTERVAL_MS,
  CUSTODY_SWEEP_INTERVAL_MS,
  callbackBaseUrl,
  ensureSimulatedRailPartner,
  fireblocksRequest,
  RAIL_CALLBACK_SWEEP_INTERVAL_MS,
  RAIL_CREDIT_VERIFICATION_WORKER_INTERVAL_MS,
  RAIL_REVERSAL_WORKER_INTERVAL_MS,
  type RailPartnerDirectory,
  railPartnerDirectory,
  runCustodyDepositPollOnce,
  runCustodyReservePassOnce,
  runCustodySweepPassOnce,
  runRailCallbackSweepOnce,
  runRailCreditVerificationWorkerOnce,
  runRailReversalWorkerOnce,
} from './modules/railPartners/index.ts';
import { DEPOSIT_WORKER_INTERVAL_MS, runDepositWorkerOnce } from './modules/stablecoins/index.ts';
import {
  RAIL_WORKER_INTERVAL_MS,
  type RailResolver,
  type RailWorkerLog,
  registryResolver,
  runRailWorkerOnce,
} from './modules/transfers/index.ts';
import { guardedFetch } from './outbound/guard.ts';
import {
  FIREBLOCKS_SANDBOX_ASSET_IDS,
  FIREBLOCKS_SANDBOX_TREASURY,
  type RunningPartnerSimulators,
  startPartnerSimulators,
} from './partnerSimulators.ts';
import { sandboxRails } from './rails/sandbox.ts';
import { FIREBLOCKS_SIMULATOR_ASSETS, type FireblocksSimulator } from './simulators/fireblocks/index.ts';
import { findOrganizationByName } from './store/repositories/organizations.ts';
import type { StopSignals } from './workers/periodic.ts';

/** A periodic pass: its name (as errors report it), its interval, and the pass (told when to stop). */
export type PeriodicWork = readonly [
  name: string,
  intervalMs: number,
  tick: (signals: StopSignals) => Promise<unknown>,
];

/** Payouts, collections and partners' callbacks through the rails, and deposits. */
export function railWork(deps: Deps, config: Config, railLog: RailWorkerLog): PeriodicWork[] {
  const directory = railPartnerDirectory(deps);
  const resolveRail = payoutRailResolver(directory, config.environment);
  const simulatedCollections = config.environment === 'sandbox' ? simulatedCollectionRail() : undefined;
  const resolveCollectionRail: CollectionRailResolver = async (collection) => {
    const partner = await directory.forRail(collection.organizationId, collection.rail, collection.network);
    return partner ? partnerCollectionRail(partner) : simulatedCollections;
  };
  return [
    [
      'rail-worker',
      RAIL_WORKER_INTERVAL_MS,
      (signals) => runRailWorkerOnce(deps, resolveRail, { log: railLog, ...signals }),
    ],
    [
      'collection-worker',
      COLLECTION_WORKER_INTERVAL_MS,
      () => runCollectionWorkerOnce(deps, resolveCollectionRail, { log: railLog }),
    ],
    ['rail-callback-sweep', RAIL_CALLBACK_SWEEP_INTERVAL_MS, () => runRailCallbackSweepOnce(deps, directory)],
    // Deposits a custody partner completed whose webhook never came.
    [
      'custody-deposit-poll',
      CUSTODY_DEPOSIT_POLL_INTERVAL_MS,
      () => runCustodyDepositPollOnce(deps, directory),
    ],
    // Custody partners' reserves, read as the closed day's closing balance for the safeguarding check.
    [
      'custody-reserve-poll',
      CUSTODY_RESERVE_POLL_INTERVAL_MS,
      () => runCustodyReservePassOnce(deps, directory),
    ],
    // Deposits swept out of wallets' vault accounts into the payout vault.
    ['custody-sweep', CUSTODY_SWEEP_INTERVAL_MS, () => runCustodySweepPassOnce(deps, directory)],
    [
      'rail-reversal-worker',
      RAIL_REVERSAL_WORKER_INTERVAL_MS,
      () => runRailReversalWorkerOnce(deps, directory),
    ],
    [
      'rail-credit-verification-worker',
      RAIL_CREDIT_VERIFICATION_WORKER_INTERVAL_MS,
      () => runRailCreditVerificationWorkerOnce(deps, directory),
    ],
    // Deposits are decided wherever they come from (the simulated chain today, a custody provider later).
    ['deposit-worker', DEPOSIT_WORKER_INTERVAL_MS, () => runDepositWorkerOnce(deps, { log: railLog })],
  ];
}

/**
 * Where the rail worker sends a payout: the organization's configured rail partner; in the sandbox, a rail
 * without one is carried by the simulated rails. Production has no simulation: a rail no partner carries
 * fails the transfer.
 */
export function payoutRailResolver(directory: RailPartnerDirectory, environment: Environment): RailResolver {
  const simulated = environment === 'sandbox' ? registryResolver(sandboxRails()) : undefined;
  return async (transfer) =>
    (await directory.forTransfer(transfer)) ?? (simulated ? simulated(transfer) : undefined);
}

/**
 * The sandbox's partner simulators, in this process: the sandbox organization's M-Pesa, MTN, bank
 * (Flutterwave) and digital-asset (Fireblocks) partners point at them, so its sandbox payouts, collections,
 * bank deposits and deposit addresses run through the production adapters. Returns them, with their stop.
 */
export async function startSandboxSimulators(
  deps: Deps,
  log: (line: string) => void,
): Promise<RunningPartnerSimulators> {
  const organization = await findOrganizationByName(deps.store, SANDBOX_ORGANIZATION_NAME);
  const started = await startPartnerSimulators(deps.publicUrl, fundedFireblocksVault);
  const feeds = sandboxPartnerFeeds(started);
  deps.sandboxPartnerFeeds = feeds;
  const simulators: RunningPartnerSimulators = {
    ...started,
    async stop() {
      if (deps.sandboxPartnerFeeds === feeds) deps.sandboxPartnerFeeds = undefined;
      await started.stop();
    },
  };
  if (!organization) return simulators;
  const configured = [];
  for (const config of simulators.configs) {
    const partner = await ensureSimulatedRailPartner(deps, organization.id, config);
    if (!partner) continue;
    configured.push(partner.partner);
    const callbackUrl = callbackBaseUrl(deps, partner);
    if (callbackUrl) simulators.deliverWebhooksTo(partner.partner, callbackUrl);
  }
  log(
    `sandbox partner simulators: M-Pesa Daraja at ${simulators.darajaUrl}, MTN MoMo at ${simulators.momoUrl}, Flutterwave at ${simulators.flutterwaveUrl}, Fireblocks at ${simulators.fireblocksUrl} (source vault ${simulators.fireblocksSourceVaultId})${configured.length ? ` (carrying ${configured.join(', ')})` : ''}`,
  );
  return simulators;
}

/**
 * The sandbox's routes' way into the simulators (`POST /v1/sandbox/bank-transfers`, and
 * `POST /v1/sandbox/chain/deposits` to a Fireblocks address): their in-process controls, whose webhooks
 * then carry the money to the service as the partners' own do.
 */
export function sandboxPartnerFeeds(sims: RunningPartnerSimulators): SandboxPartnerFeeds {
  return {
    async bankTransfer({ accountNumber, amount, senderName }) {
      const known = sims.flutterwave.virtualAccounts().some((a) => a.account_number === accountNumber);
      // Simulators keep their state in memory: an account issued by an earlier run is not this one's.
      if (!known)
        throw resourceMissing(
          'virtual account number at the bank simulator',
          accountNumber,
          'account_number',
        );
      // Flutterwave reports amounts as JSON numbers in major units; the adapter reads them back exactly.
      const charge = await sims.flutterwave.payIntoVirtualAccount({
        accountNumber,
        amount: Number(amount),
        ...(senderName === undefined ? {} : { payerName: senderName }),
      });
      return { reference: String(charge.id) };
    },
    async custodyDeposit({ walletId, asset, network, address, amount }) {
      const vaultId = await walletVaultAccount(sims.fireblocks, walletId);
      const assetId = Object.entries(FIREBLOCKS_SIMULATOR_ASSETS).find(
        ([, known]) => known.asset === asset && known.network === network,
      )?.[0];
      if (vaultId === undefined || assetId === undefined) {
        throw resourceMissing('deposit address at the custody simulator', address, 'address');
      }
      const transaction = sims.fireblocks.deposit({ vaultAccountId: vaultId, assetId, amount, address });
      return { reference: transaction.id, txHash: transaction.txHash };
    },
  };
}

/** The Fireblocks vault account the adapter opened for a wallet (named `mkoba <wallet id>`), if any. */
async function walletVaultAccount(sim: FireblocksSimulator, walletId: string): Promise<string | undefined> {
  const name = `mkoba ${walletId}`;
  const query = new URLSearchParams({ namePrefix: name });
  const found = await fireblocksRequest(
    fireblocksSimulatorClient(sim),
    'GET',
    `/vault/accounts_paged?${query}`,
  );
  const accounts = (found.body as { accounts?: Array<{ id: string; name: string }> } | undefined)?.accounts;
  return accounts?.find((account) => account.name === name)?.id;
}

/**
 * How to call a Fireblocks simulator as its default API user (signed as the adapter signs), through the
 * outbound guard as every server call is: the sandbox's simulators are on this machine (loopback allowed).
 */
export function fireblocksSimulatorClient(sim: FireblocksSimulator, sourceVaultAccountId = '') {
  return {
    fetch: guardedFetch(outboundPolicyFor('sandbox')),
    baseUrl: sim.baseUrl,
    apiKey: sim.credentials.apiKey,
    privateKey: sim.credentials.secretKey,
    webhookPublicKey: sim.webhookPublicKey,
    sourceVaultAccountId,
  };
}

/**
 * The sandbox's Fireblocks source vault: a vault account holding every asset the simulator knows, opened
 * through Fireblocks' own API and funded as a deposit on chain would (FIREBLOCKS_SANDBOX_TREASURY).
 */
async function fundedFireblocksVault(sim: FireblocksSimulator): Promise<string> {
  const client = fireblocksSimulatorClient(sim);
  const vault = await fireblocksRequest(client, 'POST', '/vault/accounts', {
    name: 'mkoba sandbox treasury',
  });
  const id = (vault.body as { id?: unknown } | undefined)?.id;
  if (vault.status !== 200 || typeof id !== 'string') {
    throw new Error(`the Fireblocks simulator opened no vault account: ${vault.status}`);
  }
  for (const assetId of FIREBLOCKS_SANDBOX_ASSET_IDS) {
    const wallet = await fireblocksRequest(client, 'POST', `/vault/accounts/${id}/${assetId}`);
    if (wallet.status !== 200) throw new Error(`the Fireblocks simulator opened no ${assetId} wallet`);
    sim.setBalance(id, assetId, FIREBLOCKS_SANDBOX_TREASURY);
  }
  return id;
}
