/**
 * An M-Pesa partner configuration's initiator: a pre-encrypted security_credential (as before), or the
 * initiator's password with Safaricom's certificate for the adapter to encrypt, checked when configured and
 * carried by the factory into an adapter that pays against the simulator.
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRailPartnerFields } from '../src/modules/railPartners/domain.ts';
import { PARTNER_RAIL_FACTORIES } from '../src/modules/railPartners/index.ts';
import {
  DARAJA_SIMULATOR_CERTIFICATE_PEM,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';

/** How long the test waits for the payout's result, and how often it looks. */
const RESULT_WAIT_MS = 3_000;
const POLL_MS = 10;

const D = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
const OPTIONS = { partial: false, addressPolicy: 'allow_loopback' as const };

function fields(settings: Record<string, string>, credentials: Record<string, string>) {
  return {
    settings: {
      base_url: 'http://127.0.0.1:1',
      short_code: D.shortCode,
      initiator_name: D.initiatorName,
      ...settings,
    },
    credentials: {
      consumer_key: D.consumerKey,
      consumer_secret: D.consumerSecret,
      passkey: D.passkey,
      ...credentials,
    },
  };
}

const paramOf = (run: () => unknown) => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { param?: string }).param;
  }
};

describe('the initiator in an M-Pesa configuration', () => {
  it('takes a pre-encrypted credential, or a password with the certificate, and refuses neither', () => {
    expect(
      paramOf(() =>
        checkRailPartnerFields('mpesa_daraja', fields({}, { security_credential: 'x' }), OPTIONS),
      ),
    ).toBe(undefined);
    const encrypting = fields(
      { security_certificate: DARAJA_SIMULATOR_CERTIFICATE_PEM },
      { initiator_password: 'pw' },
    );
    expect(paramOf(() => checkRailPartnerFields('mpesa_daraja', encrypting, OPTIONS))).toBe(undefined);
    expect(paramOf(() => checkRailPartnerFields('mpesa_daraja', fields({}, {}), OPTIONS))).toBe(
      'credentials.security_credential',
    );
    expect(
      paramOf(() =>
        checkRailPartnerFields('mpesa_daraja', fields({}, { initiator_password: 'pw' }), OPTIONS),
      ),
    ).toBe('settings.security_certificate');
  });
});

describe('an adapter built from a password and the certificate', () => {
  let simulator: DarajaSimulator;
  let server: http.Server;
  let callbackBase = '';
  const arrived: string[] = [];

  beforeAll(async () => {
    simulator = await startDarajaSimulator();
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      request.on('end', () => {
        arrived.push(body);
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    callbackBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks/token`;
  });

  afterAll(async () => {
    await simulator?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it('pays: the simulator decrypts the credential the adapter made', async () => {
    const { settings, credentials } = fields(
      { base_url: simulator.url, security_certificate: DARAJA_SIMULATOR_CERTIFICATE_PEM },
      { initiator_password: D.initiatorPassword },
    );
    const rail = PARTNER_RAIL_FACTORIES.mpesa_daraja(
      { settings, credentials, addressPolicy: 'allow_loopback' },
      { baseUrl: callbackBase },
    );
    const now = new Date();
    const id = `tr_partner_credentials_${now.getTime()}`;
    const transfer = {
      id,
      destination: { type: 'mobile_money', network: 'mpesa', phone: '+254700000000' },
      amountMinor: 100_00n,
      currency: 'KES',
    } as unknown as Parameters<typeof rail.submit>[0]['transfer'];
    expect(await rail.submit({ idempotencyReference: id, transfer }, now)).toMatchObject({ accepted: true });
    const deadline = Date.now() + RESULT_WAIT_MS;
    while (!arrived.some((body) => body.includes(id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const result = JSON.parse(arrived.find((body) => body.includes(id)) ?? '{}') as {
      Result?: { ResultCode?: number };
    };
    expect(result.Result?.ResultCode).toBe(0);
  });
});
