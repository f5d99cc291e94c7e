/** A real HTTP receiver on 127.0.0.1 for webhook tests: records every request, answers as told. */
import http from 'node:http';

export interface Received {
  /** The request's path (and query), as sent. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Decides the answer to each request; 200 by default. */
  respond: (request: Received) => { status: number; headers?: Record<string, string>; delayMs?: number };
  /** Requests open now, and the most ever open at once. */
  open: number;
  openMax: number;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    respond: () => ({ status: 200 }),
    open: 0,
    openMax: 0,
    close: async () => {},
  };
  const server = http.createServer((request, response) => {
    receiver.open++;
    receiver.openMax = Math.max(receiver.openMax, receiver.open);
    response.on('close', () => {
      receiver.open--;
    });
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const entry = { path: request.url ?? '', headers: request.headers, body, at: Date.now() };
      receiver.received.push(entry);
      const answer = receiver.respond(entry);
      const send = () => {
        response.writeHead(answer.status, answer.headers);
        response.end('ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  receiver.url = `http://127.0.0.1:${port}${path}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
