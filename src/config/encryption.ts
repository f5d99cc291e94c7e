/** MKOBA_ENCRYPTION_KEY and MKOBA_ENCRYPTION_KEYS_PREVIOUS read, and where a configuration must set a key. */
import type { Config } from '../config.ts';
import { isLiveEnvironment } from '../domain/access.ts';
import { MASTER_KEY_BYTES, parseMasterKey } from '../domain/sealing.ts';
import { ConfigError, nonEmpty } from './variables.ts';

/**
 * Master keys for secrets at rest (src/domain/sealing.ts). `currentKey` seals; `previousKeys` only open
 * what older keys sealed, until `mkoba encryption rewrap` has moved it to the current key.
 */
export interface EncryptionSettings {
  currentKey: Uint8Array | undefined;
  previousKeys: Uint8Array[];
}

const ENCRYPTION_KEY_FORMAT = `${MASTER_KEY_BYTES} random bytes in base64 or hex (e.g. from 'openssl rand -base64 ${MASTER_KEY_BYTES}')`;

export function loadEncryptionSettings(env: NodeJS.ProcessEnv): EncryptionSettings {
  const currentText = nonEmpty(env.MKOBA_ENCRYPTION_KEY);
  const currentKey = currentText === undefined ? undefined : parseMasterKey(currentText);
  if (currentText !== undefined && currentKey === undefined) {
    throw new ConfigError('MKOBA_ENCRYPTION_KEY', `must be ${ENCRYPTION_KEY_FORMAT}`);
  }
  const previousText = nonEmpty(env.MKOBA_ENCRYPTION_KEYS_PREVIOUS);
  const previousKeys: Uint8Array[] = [];
  for (const [index, part] of (previousText?.split(',') ?? []).entries()) {
    const key = parseMasterKey(part);
    if (!key) {
      throw new ConfigError(
        'MKOBA_ENCRYPTION_KEYS_PREVIOUS',
        `entry ${index + 1} must be ${ENCRYPTION_KEY_FORMAT}; separate keys with commas`,
      );
    }
    previousKeys.push(key);
  }
  return { currentKey, previousKeys };
}

/**
 * Whether this configuration may run without MKOBA_ENCRYPTION_KEY: only the embedded sandbox, which keeps
 * a generated key in its data directory. Production, and any deployment on PostgreSQL (several processes
 * share the database, so they must share the key, and a key kept in the database would protect nothing),
 * need it set; the check runs where the key is used (serve, worker, encryption rewrap).
 */
export function requireEncryptionKey(config: Config): Uint8Array | undefined {
  if (config.encryption.currentKey !== undefined) return config.encryption.currentKey;
  if (isLiveEnvironment(config.environment) || config.databaseUrl !== undefined) {
    const where = isLiveEnvironment(config.environment)
      ? `when MKOBA_ENV=${config.environment}`
      : 'with DATABASE_URL';
    throw new ConfigError('MKOBA_ENCRYPTION_KEY', `is required ${where}: set it to ${ENCRYPTION_KEY_FORMAT}`);
  }
  return undefined;
}
