/**
 * How a partner simulator starts listening, shared by all of them: plain HTTP, or HTTPS under the simulator's
 * own fixed test certificate (for clients that only speak HTTPS or only reach a partner's fixed host name),
 * on the port and address asked for (an ephemeral port on 127.0.0.1 by default). Returns the server and its
 * origin URL.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/** A simulator's TLS identity: a certificate (PEM) and its private key (PEM). Test keys only. */
export interface SimulatorTlsIdentity {
  cert: string;
  key: string;
}

export interface SimulatorListenOptions {
  port?: number;
  host?: string;
  /** When set, the simulator speaks HTTPS with this identity. */
  tls?: SimulatorTlsIdentity;
}

export interface ListeningSimulator {
  server: http.Server;
  /** The origin, without a trailing slash: `https://…` under TLS, `http://…` otherwise. */
  url: string;
}

export async function listenSimulator(
  handler: http.RequestListener,
  options: SimulatorListenOptions,
): Promise<ListeningSimulator> {
  const server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, url: `${options.tls ? 'https' : 'http'}://${host}:${address.port}` };
}
