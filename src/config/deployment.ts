/**
 * Where this deployment is reached (MKOBA_PUBLIC_URL), and the sandbox deployment's database that pilot and
 * production read launch gates from (MKOBA_SANDBOX_DATABASE_URL).
 */
import { type Environment, isLiveEnvironment } from '../domain/access.ts';
import { ConfigError, nonEmpty } from './variables.ts';

/** MKOBA_PUBLIC_URL: an absolute http(s) URL without query or fragment (https in pilot and production). */
export function loadPublicUrl(env: NodeJS.ProcessEnv, environment: Environment): string | undefined {
  const text = nonEmpty(env.MKOBA_PUBLIC_URL);
  // Unset: the sandbox server uses the address it listens on, once it listens (PORT may be 0).
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError('MKOBA_PUBLIC_URL', 'must be an absolute URL, e.g. https://api.example.com');
  }
  const allowed = isLiveEnvironment(environment) ? ['https:'] : ['https:', 'http:'];
  if (!allowed.includes(url.protocol) || url.search !== '' || url.hash !== '') {
    throw new ConfigError(
      'MKOBA_PUBLIC_URL',
      `must be an ${isLiveEnvironment(environment) ? 'https' : 'http(s)'} URL without a query or fragment`,
    );
  }
  return text.replace(/\/+$/, '');
}

/** MKOBA_SANDBOX_DATABASE_URL: pilot and production only; a PostgreSQL URL other than DATABASE_URL. */
export function loadSandboxDatabaseUrl(
  env: NodeJS.ProcessEnv,
  environment: Environment,
  databaseUrl: string | undefined,
): string | undefined {
  const url = nonEmpty(env.MKOBA_SANDBOX_DATABASE_URL);
  if (url === undefined) return undefined;
  if (!isLiveEnvironment(environment)) {
    throw new ConfigError(
      'MKOBA_SANDBOX_DATABASE_URL',
      'applies only to pilot and production, which read the sandbox’s launch gates; the sandbox is its own source',
    );
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new ConfigError('MKOBA_SANDBOX_DATABASE_URL', 'must be a postgres:// or postgresql:// URL');
  }
  if (url === databaseUrl) {
    throw new ConfigError(
      'MKOBA_SANDBOX_DATABASE_URL',
      'must be the sandbox deployment’s database, not this deployment’s own DATABASE_URL',
    );
  }
  return url;
}
