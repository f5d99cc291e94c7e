/**
 * The composition root's list of capability modules as the HTTP edge sees them, in the order their routes
 * are added. A new module adds its `…Http` here; `src/http/app.ts` adds each one's schemas, then its routes.
 */
import type { HttpModule } from '../http/httpModule.ts';
import { apiKeysHttp } from './apiKeys/index.ts';
import { authorizationHttp } from './authorization/index.ts';
import { collectionsHttp, collectionsSandboxHttp } from './collections/index.ts';
import { complianceHttp } from './compliance/index.ts';
import { customersHttp } from './customers/index.ts';
import { digitalAccountsHttp } from './digitalAccounts/index.ts';
import { exportsHttp } from './exports/index.ts';
import { feesHttp } from './fees/index.ts';
import { launchGatesHttp } from './launchGates/index.ts';
import { ledgerHttp } from './ledger/index.ts';
import { lendingHttp } from './lending/index.ts';
import { organizationHttp } from './organization/index.ts';
import { paymentBatchesHttp } from './paymentBatches/index.ts';
import { railPartnersHttp, railPartnersSandboxHttp } from './railPartners/index.ts';
import { receiptsHttp } from './receipts/index.ts';
import { savingsHttp } from './savings/index.ts';
import { stablecoinsHttp, stablecoinsSandboxHttp } from './stablecoins/index.ts';
import { testClockHttp } from './testClock/index.ts';
import { transfersHttp, transfersSandboxHttp } from './transfers/index.ts';
import { treasuryHttp, treasurySandboxHttp } from './treasury/index.ts';
import { walletsHttp } from './wallets/index.ts';
import { webhooksHttp } from './webhooks/index.ts';

export const HTTP_MODULES: readonly HttpModule[] = [
  ledgerHttp,
  customersHttp,
  organizationHttp,
  walletsHttp,
  authorizationHttp,
  complianceHttp,
  digitalAccountsHttp,
  apiKeysHttp,
  feesHttp,
  transfersHttp,
  transfersSandboxHttp,
  collectionsHttp,
  collectionsSandboxHttp,
  stablecoinsHttp,
  stablecoinsSandboxHttp,
  treasuryHttp,
  treasurySandboxHttp,
  railPartnersHttp,
  railPartnersSandboxHttp,
  webhooksHttp,
  launchGatesHttp,
  receiptsHttp,
  paymentBatchesHttp,
  exportsHttp,
  lendingHttp,
  savingsHttp,
  testClockHttp,
];
