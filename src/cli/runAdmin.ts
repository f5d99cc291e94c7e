/**
 * Where an operator command runs: in this process when it can open the database, else through the running
 * server that holds the embedded data directory; and what the CLI fills in for a command (the operator, the
 * sandbox's organization).
 */
import { userInfo } from 'node:os';
import { type AdminCommand, type AdminProgress, type AdminResult, runAdminCommand } from '../app/admin.ts';
import { systemDeps } from '../app/deps.ts';
import { SANDBOX_ORGANIZATION_NAME } from '../app/seed.ts';
import { CONTROL_SOCKET_WAIT_MS, type Config } from '../config.ts';
import { loadKeyring } from '../processSecrets.ts';
import { DataDirBusyError, type OpenedStore, openLaunchGateSource, openStore } from '../processStore.ts';
import { ControlChannelNotListeningError, sendControlCommand } from './controlChannel.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };

/** Who runs this CLI, as keys and evidence record it: the OS user (its uid when it has no name). */
export function operatorName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}

const CONTROL_SOCKET_POLL_INTERVAL_MS = 200;

/**
 * Runs an operator command: in this process when it can open the database, else through the server that
 * holds the embedded data directory. A server still starting has taken the lock but not yet opened its
 * control socket, so the command waits for it (bounded); if that server stops instead, the lock is free
 * and the command runs here after all.
 */
export async function runAdmin(
  config: Config,
  io: Io,
  command: AdminCommand,
  onProgress?: (progress: AdminProgress) => void,
): Promise<AdminResult> {
  const deadline = Date.now() + CONTROL_SOCKET_WAIT_MS;
  let waitAnnounced = false;
  for (;;) {
    const opened = await openStore(config, 'cli', io.err);
    if ('store' in opened) {
      if (opened.createdDatabase) io.err(newDatabaseWarning(config.dataDir));
      return runHere(config, opened, command, onProgress);
    }
    if (!opened.socket) throw new DataDirBusyError(config.dataDir, opened);
    try {
      return await sendControlCommand(opened.socket, command, onProgress);
    } catch (error) {
      if (!(error instanceof ControlChannelNotListeningError)) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(`mkoba serve (process ${opened.pid}) could not run the command: ${reason}`);
      }
      if (Date.now() >= deadline) {
        throw new Error(
          `mkoba serve (process ${opened.pid}) holds ${config.dataDir} but did not open its control socket within ${CONTROL_SOCKET_WAIT_MS} ms; is it stuck?`,
        );
      }
      if (!waitAnnounced) io.err(`waiting for mkoba serve (process ${opened.pid}) to finish starting`);
      waitAnnounced = true;
      await new Promise((resolve) => setTimeout(resolve, CONTROL_SOCKET_POLL_INTERVAL_MS));
    }
  }
}

/**
 * A command on a data directory that holds no database creates one: said aloud, since the likely intent
 * was a server's existing database in another directory.
 */
function newDatabaseWarning(dataDir: string): string {
  return `mkoba: warning: ${dataDir} held no database, so a new empty one was created there. If you meant a server's database, set MKOBA_DATA_DIR to that server's data directory (or DATABASE_URL).`;
}

async function runHere(
  config: Config,
  opened: OpenedStore,
  command: AdminCommand,
  onProgress?: (progress: AdminProgress) => void,
): Promise<AdminResult> {
  // Only the commands that read the launch gates open the sandbox's database (pilot and production).
  const launchGateSource = [
    'keys.create',
    'launch-gates.list',
    'launch-gates.override',
    'subscriptions.promote',
  ].includes(command.name)
    ? await openLaunchGateSource(config)
    : undefined;
  try {
    // Only the commands that handle secrets need the master keys.
    const keyring = ['encryption.rewrap', 'subscriptions.promote'].includes(command.name)
      ? loadKeyring(config, opened.lock !== undefined)
      : undefined;
    const deps = systemDeps(opened.store, config.environment, {
      ...(keyring ? { keyring } : {}),
      exportDirectory: config.exportDir,
      launchGateSource,
    });
    // A fresh data directory is migrated first, so `keys create` works before the first `serve`.
    if (command.name !== 'migrate') await runAdminCommand(deps, { name: 'migrate' });
    return await runAdminCommand(deps, command, onProgress);
  } finally {
    await launchGateSource?.close();
    await opened.close();
  }
}

/** The organization a command names, else (in the sandbox) the sandbox's own, as the README's examples assume. */
export function organizationOrSandbox(named: string | undefined, config: Config): string | undefined {
  return named ?? (config.environment === 'sandbox' ? SANDBOX_ORGANIZATION_NAME : undefined);
}
