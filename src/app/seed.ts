/**
 * The sandbox seed: one organization with its API key, customers of each kind, and KES, UGX and USDC
 * wallets, funded through the sandbox's fund path (a settled collection each: a real ledger posting from
 * the rail's settlement account), and one wallet issued account details (a digital account) under the
 * sandbox's bank. It runs once per database (claimed in the seeds table inside the same transaction). Then
 * the sample sanctions list, once per database too.
 */

import { hashApiKey } from '../domain/apiKeys.ts';
import { AppError } from '../domain/errors.ts';
import type { Currency } from '../domain/money.ts';
import type { Wallet } from '../domain/wallets.ts';
import { issueApiKeyIn } from '../modules/apiKeys/index.ts';
import { sandboxFunding } from '../modules/collections/index.ts';
import { seedSampleSanctionsList, seedVerifiedCustomers } from '../modules/compliance/index.ts';
import { type CreateCustomerInput, createCustomer } from '../modules/customers/index.ts';
import { ensureAccountDetails, putDigitalAccountSettings } from '../modules/digitalAccounts/index.ts';
import { lockFundingAccounts } from '../modules/transfers/index.ts';
import { createWallet } from '../modules/wallets/index.ts';
import { findApiKeyByHash } from '../store/repositories/apiKeys.ts';
import { claimSeed } from '../store/repositories/seeds.ts';
import type { Deps } from './deps.ts';
import { SYSTEM_ACTOR } from './evidence.ts';

export const SANDBOX_ORGANIZATION_NAME = 'Mkoba Sandbox';
const SANDBOX_SEED_NAME = 'sandbox_v1';

/** The bank the sandbox organization issues account numbers under (docs/PRODUCTS.md, digital accounts). */
export const SANDBOX_BANK = { bank_code: 'MKOBASBX', bank_name: 'Mkoba Sandbox Bank' } as const;

interface SeedWallet {
  currency: Currency;
  /** What the seed funds it with: a decimal string at the currency's exponent. */
  funding: string;
  /** Issued account details: the seed's digital account. */
  digitalAccount?: boolean;
}

const SEED_CUSTOMERS: { customer: CreateCustomerInput; wallets: SeedWallet[] }[] = [
  {
    customer: {
      type: 'individual',
      name: 'Amina Wanjiru',
      email: 'amina@example.com',
      phone: '+254712345678',
      metadata: { seed: 'true' },
    },
    wallets: [{ currency: 'KES', funding: '25000.00', digitalAccount: true }],
  },
  {
    customer: {
      type: 'individual',
      name: 'Joseph Okello',
      email: 'joseph@example.com',
      phone: '+256772123456',
      metadata: { seed: 'true' },
    },
    wallets: [{ currency: 'UGX', funding: '500000' }],
  },
  {
    customer: {
      type: 'business',
      name: 'Duka Traders Ltd',
      email: 'finance@duka.example.com',
      phone: '+254202345678',
      metadata: { seed: 'true' },
    },
    wallets: [
      { currency: 'KES', funding: '1000000.00' },
      { currency: 'UGX', funding: '20000000' },
      { currency: 'USDC', funding: '5000.000000' },
    ],
  },
];

export interface SeedResult {
  seeded: boolean;
  /** The sandbox key in clear, known only when this run created it. */
  apiKey: string | undefined;
}

export async function seedSandbox(deps: Deps, configuredKey: string | undefined): Promise<SeedResult> {
  if (deps.environment !== 'sandbox') {
    throw new AppError({
      status: 500,
      code: 'internal_error',
      title: 'Refused',
      detail: 'The sandbox seed never runs outside the sandbox environment.',
    });
  }
  const result = await deps.store.transaction(async (tx): Promise<SeedResult> => {
    if (!(await claimSeed(tx, SANDBOX_SEED_NAME, deps.now()))) {
      // Seeded before: make sure a newly configured fixed key works too.
      if (configuredKey !== undefined && !(await findApiKeyByHash(tx, hashApiKey(configuredKey)))) {
        await issueApiKeyIn(tx, deps, {
          organizationName: SANDBOX_ORGANIZATION_NAME,
          key: configuredKey,
          createdBy: 'seed',
        });
        return { seeded: false, apiKey: configuredKey };
      }
      return { seeded: false, apiKey: configuredKey };
    }
    const issued = await issueApiKeyIn(tx, deps, {
      organizationName: SANDBOX_ORGANIZATION_NAME,
      key: configuredKey,
      createdBy: 'seed',
    });
    const organizationId = issued.record.organizationId;
    const funded: { wallet: Wallet; funding: string; digitalAccount: boolean }[] = [];
    for (const { customer, wallets } of SEED_CUSTOMERS) {
      const created = await createCustomer(tx, deps, organizationId, customer);
      for (const { currency, funding, digitalAccount } of wallets) {
        const wallet = await createWallet(tx, deps, organizationId, {
          owner: created.id,
          currency,
          metadata: { seed: 'true' },
        });
        funded.push({ wallet, funding, digitalAccount: digitalAccount === true });
      }
    }
    // Every account the fundings post to, locked in one statement before the first of them: funding one
    // wallet after another would lock a currency's settlement account after a wallet whose id sorts after it
    // (src/store/lockOrder.ts).
    await lockFundingAccounts(
      tx,
      deps,
      funded.map((f) => f.wallet),
    );
    for (const { wallet, funding } of funded) {
      await sandboxFunding(tx, deps, organizationId, wallet.id, funding, { seed: 'true' });
    }
    const digitalAccounts = funded.filter((f) => f.digitalAccount).map((f) => f.wallet.id);
    // After the funding: the settings' evidence takes the chain head, the last lock of the lock order.
    await putDigitalAccountSettings(tx, deps, organizationId, SANDBOX_BANK, SYSTEM_ACTOR);
    for (const walletId of digitalAccounts) await ensureAccountDetails(tx, deps, organizationId, walletId);
    return { seeded: true, apiKey: issued.key };
  });
  await seedSampleSanctionsList(deps);
  await seedVerifiedCustomers(deps, SANDBOX_ORGANIZATION_NAME);
  return result;
}
