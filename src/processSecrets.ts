/**
 * The secrets a serving or working process holds: its master keyring (configured, or the embedded
 * sandbox's generated key file), the start-up duties for secrets at rest, and the embedded sandbox's API
 * key kept in its data directory.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Deps } from './app/deps.ts';
import { missingMasterKeys, sealClearSecrets } from './app/secretsAtRest.ts';
import { requireEncryptionKey } from './config/encryption.ts';
import { ConfigError } from './config/variables.ts';
import type { Config } from './config.ts';
import { type Keyring, keyringIds, keyringOf, MASTER_KEY_BYTES, parseMasterKey } from './domain/sealing.ts';

const SANDBOX_KEY_FILE = 'sandbox-api-key';

/**
 * The embedded sandbox keeps its seeded key in the data directory (mode 0600) so every `npm start` can
 * print it. The database itself holds only the hash; production never seeds and never writes this file.
 */
export function rememberSandboxKey(dataDir: string, key: string | undefined): string | undefined {
  const file = path.join(dataDir, SANDBOX_KEY_FILE);
  if (key !== undefined) {
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    return key;
  }
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const ENCRYPTION_KEY_FILE = 'encryption-key';

/**
 * The master keys of a process: MKOBA_ENCRYPTION_KEY to seal with, and MKOBA_ENCRYPTION_KEYS_PREVIOUS to
 * open what older keys sealed. The embedded sandbox without MKOBA_ENCRYPTION_KEY generates a key once and
 * keeps it in <MKOBA_DATA_DIR>/encryption-key (mode 0600); when MKOBA_ENCRYPTION_KEY is set there, a key in
 * that file still opens what it sealed, so moving to a configured key takes only `mkoba encryption rewrap`.
 */
export function loadKeyring(config: Config, embedded: boolean): Keyring {
  const configured = requireEncryptionKey(config);
  if (!embedded) return keyringOf(configured, config.encryption.previousKeys);
  const file = path.join(config.dataDir, ENCRYPTION_KEY_FILE);
  let stored: Uint8Array | undefined;
  try {
    const text = readFileSync(file, 'utf8');
    stored = parseMasterKey(text);
    if (!stored) {
      throw new ConfigError(
        'MKOBA_ENCRYPTION_KEY',
        `is not set, and ${file} does not hold ${MASTER_KEY_BYTES} bytes in base64 or hex`,
      );
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (configured === undefined && stored === undefined) {
    stored = new Uint8Array(randomBytes(MASTER_KEY_BYTES));
    writeFileSync(file, `${Buffer.from(stored).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  }
  const older = configured !== undefined && stored !== undefined ? [stored] : [];
  return keyringOf(configured ?? stored, [...config.encryption.previousKeys, ...older]);
}

/**
 * Start-up duties for secrets at rest: refuse to run with keys that cannot open the stored secrets (every
 * delivery would fail), and seal what an earlier version stored in clear.
 */
export async function openSecretsAtRest(deps: Deps, log: (line: string) => void): Promise<void> {
  const missing = await missingMasterKeys(deps);
  if (missing.length > 0) {
    throw new ConfigError(
      'MKOBA_ENCRYPTION_KEY',
      `stored webhook secrets are sealed under master key ${missing.join(', ')}, but this process has only ${keyringIds(deps.keyring).join(', ')}: set MKOBA_ENCRYPTION_KEY (or MKOBA_ENCRYPTION_KEYS_PREVIOUS) to the key they were sealed with`,
    );
  }
  const sealed = await sealClearSecrets(deps);
  if (sealed.secrets + sealed.responses > 0) {
    log(
      `sealed ${sealed.secrets} webhook secret(s) and ${sealed.responses} stored response(s) that an earlier version kept in clear`,
    );
  }
}
