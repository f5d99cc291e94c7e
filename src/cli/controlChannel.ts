/**
 * A local control channel: the serving process listens on a Unix socket in its data directory and runs
 * operator commands for CLI invocations that cannot open the embedded database themselves.
 * One JSON request and one JSON response per connection, newline-terminated; a long command (an import)
 * sends progress lines (`{"progress": …}`) before its response.
 */
import { chmodSync, rmSync } from 'node:fs';
import net from 'node:net';
import {
  type AdminCommand,
  type AdminProgress,
  type AdminResult,
  isAdminCommand,
  runAdminCommand,
} from '../app/admin.ts';
import type { Deps } from '../app/deps.ts';

const CONTROL_REQUEST_BYTES_MAX = 64 * 1024;
const CONTROL_TIMEOUT_MS = 30_000;

type ControlResponse = { ok: true; result: AdminResult } | { ok: false; error: string };
type ControlLine = ControlResponse | { progress: AdminProgress };

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
      // Progress keeps the connection busy, so a long import never meets the idle time-out.
      const progress = (update: AdminProgress) => {
        if (!socket.writableEnded) socket.write(`${JSON.stringify({ progress: update })}\n`);
      };
      runAdminCommand(deps, command, progress).then(
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

export function sendControlCommand(
  socketPath: string,
  command: AdminCommand,
  onProgress: (progress: AdminProgress) => void = () => {},
): Promise<AdminResult> {
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
    let response: ControlResponse | undefined;
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        let line: ControlLine;
        try {
          line = JSON.parse(buffer.slice(0, newline)) as ControlLine;
        } catch {
          socket.destroy(new Error('the server sent a control line that is not JSON'));
          return;
        }
        buffer = buffer.slice(newline + 1);
        if ('progress' in line) onProgress(line.progress);
        else response = line;
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const notListening = !connected && NOT_LISTENING_CODES.has(error.code ?? '');
      reject(notListening ? new ControlChannelNotListeningError(socketPath, error) : error);
    });
    socket.on('end', () => {
      if (response === undefined)
        reject(new Error('the server closed the control channel without an answer'));
      else if (response.ok) resolve(response.result);
      else reject(new Error(response.error));
    });
  });
}
