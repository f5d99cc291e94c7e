/** An organization's M-Pesa partner configured against a Daraja simulator, and the adapter on its callback address. */
import { expect } from 'vitest';
import {
  type MpesaDarajaRail,
  mpesaDarajaRail,
} from '../../src/modules/railPartners/partners/mpesaDaraja/rail.ts';
import { guardedFetch } from '../../src/outbound/guard.ts';
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  type DarajaSimulator,
} from '../../src/simulators/mpesaDaraja/index.ts';
import { api, type TestApp } from './harness.ts';

const CREDENTIALS = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;

/**
 * Configures the organization's `mpesa_daraja` partner (through the API) with the simulator's credentials,
 * plus any further `settings`; returns its id, its callback address and an adapter that names it.
 */
export async function configureSimulatedDaraja(
  t: TestApp,
  key: string,
  sim: DarajaSimulator,
  settings: Record<string, string> = {},
): Promise<{ id: string; callbackUrl: string; rail: MpesaDarajaRail }> {
  const created = await api(t, 'POST', '/v1/rail-partners', {
    key,
    body: {
      partner: 'mpesa_daraja',
      settings: {
        base_url: sim.url,
        short_code: CREDENTIALS.shortCode,
        initiator_name: CREDENTIALS.initiatorName,
        ...settings,
      },
      credentials: {
        consumer_key: CREDENTIALS.consumerKey,
        consumer_secret: CREDENTIALS.consumerSecret,
        security_credential: CREDENTIALS.securityCredential,
        passkey: CREDENTIALS.passkey,
      },
    },
  });
  expect(created.statusCode, created.body).toBe(201);
  const callbackUrl = created.data.callback_url as string;
  const rail = mpesaDarajaRail(
    {
      fetch: guardedFetch('allow_loopback'),
      baseUrl: sim.url,
      ...CREDENTIALS,
      ...(settings.stk_short_code ? { stkShortCode: settings.stk_short_code } : {}),
    },
    { baseUrl: callbackUrl },
  );
  return { id: created.data.id as string, callbackUrl, rail };
}
