/**
 * Talking to the Daraja simulator over raw HTTP as any client does, for the tests of its published APIs: a
 * bearer token, JSON POSTs, the result callbacks a local receiver gets, and a shortcode's Utility Account as
 * Account Balance reports it (in cents, read exactly).
 */
import { expect, vi } from 'vitest';
import {
  ACCOUNT_BALANCE_PATH,
  type DarajaSimulator,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS as SIM,
} from '../../src/simulators/mpesaDaraja/index.ts';
import type { Receiver } from './receiver.ts';

/** The longest wait for a result callback, and the interval between looks, in milliseconds. */
const RESULT_WAIT = { timeout: 3_000, interval: 10 };

export interface DarajaRawClient {
  /** POSTs a JSON body; the answer's status and JSON body. */
  post(
    path: string,
    body: Record<string, unknown>,
    token?: string,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** The `Result` of the first callback received that names `id`. */
  callbackMentioning(id: string): Promise<Record<string, unknown>>;
  /** The Utility Account Account Balance reports for a shortcode, in cents. */
  utilityOf(shortCode: string): Promise<bigint>;
}

/** A client of one simulator whose callbacks go to `receiver`, with one token for its whole life. */
export async function darajaRawClient(
  simulator: DarajaSimulator,
  receiver: Receiver,
): Promise<DarajaRawClient> {
  const basic = Buffer.from(`${SIM.consumerKey}:${SIM.consumerSecret}`).toString('base64');
  const issued = await fetch(`${simulator.url}/oauth/v1/generate?grant_type=client_credentials`, {
    headers: { authorization: `Basic ${basic}` },
  });
  const bearer = ((await issued.json()) as { access_token: string }).access_token;
  const client: DarajaRawClient = {
    async post(path, body, token = bearer) {
      const answer = await fetch(new URL(path, simulator.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
    },
    callbackMentioning(id) {
      return vi.waitFor(() => {
        const callback = receiver.received.find((r) => r.body.includes(id));
        if (callback === undefined) throw new Error(`no callback mentioning ${id}`);
        return (JSON.parse(callback.body) as { Result: Record<string, unknown> }).Result;
      }, RESULT_WAIT);
    },
    async utilityOf(shortCode) {
      const accepted = await client.post(ACCOUNT_BALANCE_PATH, {
        Initiator: SIM.initiatorName,
        SecurityCredential: SIM.securityCredential,
        CommandID: 'AccountBalance',
        PartyA: shortCode,
        IdentifierType: '4',
        Remarks: 'ok',
        QueueTimeOutURL: `${receiver.url}/balance/timeout`,
        ResultURL: `${receiver.url}/balance/result`,
      });
      const result = await client.callbackMentioning(String(accepted.body.OriginatorConversationID));
      const utility = String(resultParameters(result).AccountBalance)
        .split('&')
        .find((account) => account.startsWith('Utility Account|'));
      return cents(String(utility?.split('|')[2]));
    },
  };
  return client;
}

/** A result's ResultParameters as a map of their values. */
export function resultParameters(result: Record<string, unknown>): Record<string, unknown> {
  const list = (result.ResultParameters as { ResultParameter: { Key: string; Value: unknown }[] })
    .ResultParameter;
  return Object.fromEntries(list.map((p) => [p.Key, p.Value]));
}

/** Cents from a two-decimal amount, exactly (no floats). */
export function cents(text: string): bigint {
  const match = /^(-?)(\d+)\.(\d{2})$/.exec(text);
  if (!match) throw new Error(`not an amount: ${text}`);
  const magnitude = BigInt(match[2] ?? '0') * 100n + BigInt(match[3] ?? '0');
  return match[1] === '-' ? -magnitude : magnitude;
}

/** Daraja's acknowledgement of a result API's request: the two ids and ResponseCode "0". */
export function expectAcknowledged(answer: { status: number; body: Record<string, unknown> }): void {
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({
    OriginatorConversationID: expect.stringMatching(/^\d+-\d+-\d+$/),
    ConversationID: expect.stringMatching(/^AG_\d{8}_[0-9a-f]+$/),
    ResponseCode: '0',
    ResponseDescription: 'Accept the service request successfully.',
  });
}
