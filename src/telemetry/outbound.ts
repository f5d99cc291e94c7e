/**
 * A call out (a rail partner, a webhook receiver, a verification provider) as a client span, when traces
 * are on: its method, host and port and the status it answered. Never its path or query (they can carry
 * a token or a customer's number), its headers (credentials) or its body.
 */
import { activeTracing, inSpan } from './tracing.ts';

export function inOutboundSpan<T>(
  url: string,
  method: string,
  call: () => Promise<T>,
  statusOf: (answer: T) => number | undefined,
): Promise<T> {
  if (!activeTracing()) return call();
  let host: string | undefined;
  let port: number | undefined;
  try {
    const target = new URL(url);
    host = target.hostname;
    port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  } catch {
    // A URL that does not parse is refused by the call itself; the span names no host.
  }
  const attributes = { 'http.request.method': method, 'server.address': host, 'server.port': port };
  return inSpan(`${method} ${host ?? 'unknown'}`, { kind: 'client', attributes }, async (span) => {
    const answer = await call();
    const status = statusOf(answer);
    if (status !== undefined) span?.setAttributes({ 'http.response.status_code': status });
    return answer;
  });
}
