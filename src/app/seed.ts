/**
 * The sandbox seed: one organization with its API key, customers of each kind, and KES and UGX wallets.
 * It runs once per database (claimed in the seeds table inside the same transaction). Then the sample
 * sanctions list, once per database too.
 */

import { hashApiKey } from '../domain/apiKeys.ts';
import { AppError } from '../domain/errors.ts';
import type { Currency } from '../domain/money.ts';
import { findApiKeyByHash } from '../store/repositories/apiKeys.ts';
import { claimSeed } from '../store/repositories/seeds.ts';
import { issueApiKeyIn } from './apiKeys.ts';
import { type CreateCustomerInput, createCustomer } from './customers.ts';
import type { Deps } from './deps.ts';
import { seedSampleSanctionsList } from './sanctions/sampleList.ts';
import { seedVerifiedCustomers } from './seedVerifications.ts';
import { createWallet } from './wallets.ts';

export const SANDBOX_ORGANIZATION_NAME = 'Mkoba Sandbox';
const SANDBOX_SEED_NAME = 'sandbox_v1';

const SEED_CUSTOMERS: { customer: CreateCustomerInput; walletCurrencies: Currency[] }[] = [
  {
    customer: {
      type: 'individual',
      name: 'Amina Wanjiru',
      email: 'amina@example.com',
      phone: '+254712345678',
      metadata: { seed: 'true' },
    },
    walletCurrencies: ['KES'],
  },
  {
    customer: {
      type: 'individual',
      name: 'Joseph Okello',
      email: 'joseph@example.com',
      phone: '+256772123456',
      metadata: { seed: 'true' },
    },
    walletCurrencies: ['UGX'],
  },
  {
    customer: {
      type: 'business',
      name: 'Duka Traders Ltd',
      email: 'finance@duka.example.com',
      phone: '+254202345678',
      metadata: { seed: 'true' },
    },
    walletCurrencies: ['KES', 'UGX'],
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
    for (const { customer, walletCurrencies } of SEED_CUSTOMERS) {
      const created = await createCustomer(tx, deps, organizationId, customer);
      for (const currency of walletCurrencies) {
        await createWallet(tx, deps, organizationId, {
          owner: created.id,
          currency,
          metadata: { seed: 'true' },
        });
      }
    }
    return { seeded: true, apiKey: issued.key };
  });
  await seedSampleSanctionsList(deps);
  await seedVerifiedCustomers(deps, SANDBOX_ORGANIZATION_NAME);
  return result;
}
