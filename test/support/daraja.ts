/**
 * Daraja simulator helpers for tests: an organization's M-Pesa partner configured against a simulator (and the
 * adapter on its callback address), and a Daraja API call made as any client makes it.
 */
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

/** A Daraja API call with a fresh token, as any client makes it. */
export async function darajaPost(
  sim: DarajaSimulator,
  path: string,
  body: Record<string, unknown>,
): Promise<{ status: number; body: unknown }> {
  const basic = Buffer.from(`${CREDENTIALS.consumerKey}:${CREDENTIALS.consumerSecret}`).toString('base64');
  const token = (await (
    await fetch(`${sim.url}/oauth/v1/generate?grant_type=client_credentials`, {
      headers: { authorization: `Basic ${basic}` },
    })
  ).json()) as { access_token: string };
  const response = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}
