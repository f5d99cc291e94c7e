/**
 * The sandbox's customers in each KYC state, verified through the same path an integrator uses (screened
 * against the sample list, decided by the sandbox provider's magic numbers). Runs once per database, after
 * the sample sanctions list is loaded.
 */

import type { Deps } from '../../../app/deps.ts';
import type { CustomerType } from '../../../domain/customers.ts';
import type { VerificationSubmission } from '../../../domain/verifications.ts';
import { findOrganizationByName } from '../../../store/repositories/organizations.ts';
import { claimSeed } from '../../../store/repositories/seeds.ts';
import { createCustomer } from '../../customers/index.ts';
import { type SubmissionScreening, screenSubmission, submitVerification } from './verifications.ts';

const SEED_VERIFICATIONS_NAME = 'sandbox_verifications_v1';

const address = { line1: '14 Moi Avenue', city: 'Nairobi', country: 'KE' };

function person(
  legal_name: string,
  idNumber: string,
  country = 'KE',
  date_of_birth = '1990-05-17',
): VerificationSubmission {
  return {
    type: 'individual',
    legal_name,
    date_of_birth,
    national_id: { type: 'national_id', number: idNumber },
    phone: '+254712000111',
    address: { ...address, country },
  };
}

/** One customer per KYC state (the seed's first customers stay `unverified`). */
const SEED_VERIFIED_CUSTOMERS: { name: string; type: CustomerType; submission: VerificationSubmission }[] = [
  { name: 'Wanjiku Kamau', type: 'individual', submission: person('Wanjiku Kamau', '30000001') },
  { name: 'Otieno Ochieng', type: 'individual', submission: person('Otieno Ochieng', '30009991') },
  { name: 'Achieng Atieno', type: 'individual', submission: person('Achieng Atieno', '30009992') },
  // On the sample sanctions list: the verification waits in the review queue.
  {
    name: 'Oksana Belovarskaya',
    type: 'individual',
    submission: person('Oksana Belovarskaya', '30000004', 'UA', '1975-02-11'),
  },
  {
    name: 'Baraka Logistics Ltd',
    type: 'business',
    submission: {
      type: 'business',
      legal_name: 'Baraka Logistics Ltd',
      registration_number: 'PVT-2019-4411',
      country: 'KE',
      beneficial_owners: [
        {
          name: 'Halima Yusuf',
          date_of_birth: '1982-08-30',
          national_id: { type: 'national_id', number: '22334455' },
          ownership_bp: 6_000,
        },
      ],
    },
  },
];

export async function seedVerifiedCustomers(deps: Deps, organizationName: string): Promise<void> {
  const organization = await findOrganizationByName(deps.store, organizationName);
  if (!organization) return;
  const submissions: { seed: (typeof SEED_VERIFIED_CUSTOMERS)[number]; screening: SubmissionScreening }[] =
    [];
  for (const seed of SEED_VERIFIED_CUSTOMERS) {
    submissions.push({ seed, screening: await screenSubmission(deps, seed.submission) });
  }
  await deps.store.transaction(async (tx) => {
    if (!(await claimSeed(tx, SEED_VERIFICATIONS_NAME, deps.now()))) return;
    for (const { seed, screening } of submissions) {
      const customer = await createCustomer(tx, deps, organization.id, {
        type: seed.type,
        name: seed.name,
        metadata: { seed: 'true' },
      });
      await submitVerification(tx, deps, organization.id, customer.id, seed.submission, screening);
    }
  });
}
