/**
 * A local control channel: the serving process listens on a Unix socket in its data directory and runs
 * operator commands for CLI invocations that cannot open the embedded database themselves.
 * One JSON request and one JSON response per connection, newline-terminated.
 */
import { chmodSync, rmSync } from 'node:fs';
import net from 'node:net';
import { type AdminCommand, type AdminResult, isAdminCommand, runAdminCommand } from '../app/admin.ts';
import type { Deps } from '../app/deps.ts';

const CONTROL_REQUEST_BYTES_MAX = 64 * 1024;
const CONTROL_TIMEOUT_MS = 30_000;

type ControlResponse = { ok: true; result: AdminResult } | { ok: false; error: string };

/** Connection errors that mean nobody listens on the socket (yet, or any more): the command was not sent. */
const NOT_LISTENING_CODES = new Set(['ENOENT', 'ECONNREFUSED']);

/** Nobody answers on the socket, so the command was not delivered and may be retried. */
export class ControlChannelNotListeningError extends Error {
  constructor(socketPath: string, cause: unknown) {
    super(`nobody is listening on ${socketPath}`, { cause });
    this.name = 'ControlChannelNotListeningError';
  }
}

export async function startControlServer(
  deps: Deps,
  socketPath: string,
): Promise<{ close(): Promise<void> }> {
  rmSync(socketPath, { force: true });
  const server = net.createServer((socket) => {
    let buffer = '';
    socket.setTimeout(CONTROL_TIMEOUT_MS, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.on('data', function onData(chunk) {
      buffer += chunk.toString('utf8');
      if (buffer.length > CONTROL_REQUEST_BYTES_MAX) return socket.destroy();
      const newline = buffer.indexOf('\n');
      if (newline < 0) return;
      // One command per connection: whatever follows the first line is ignored, never run again.
      socket.off('data', onData);
      const reply = (response: ControlResponse) => socket.end(`${JSON.stringify(response)}\n`);
      let command: unknown;
      try {
        command = JSON.parse(buffer.slice(0, newline));
      } catch {
        return reply({ ok: false, error: 'control request is not JSON' });
      }
      if (!isAdminCommand(command)) return reply({ ok: false, error: 'unknown control command' });
      runAdminCommand(deps, command).then(
        (result) => reply({ ok: true, result }),
        (error: unknown) =>
          reply({ ok: false, error: error instanceof Error ? error.message : String(error) }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // Only the user who owns the data directory may issue operator commands.
  chmodSync(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        rmSync(socketPath, { force: true });
      }),
  };
}

export function sendControlCommand(socketPath: string, command: AdminCommand): Promise<AdminResult> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buffer = '';
    let connected = false;
    socket.setTimeout(CONTROL_TIMEOUT_MS, () =>
      socket.destroy(new Error('the server did not answer in time')),
    );
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify(command)}\n`);
    });
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const notListening = !connected && NOT_LISTENING_CODES.has(error.code ?? '');
      reject(notListening ? new ControlChannelNotListeningError(socketPath, error) : error);
    });
    socket.on('end', () => {
      try {
        const response = JSON.parse(buffer) as ControlResponse;
        if (response.ok) resolve(response.result);
        else reject(new Error(response.error));
      } catch {
        reject(new Error('the server closed the control channel without an answer'));
      }
    });
  });
}
