/** MKOBA_METRICS_TOKEN and MKOBA_METRICS_RESOURCE_LABELS: who may scrape /metrics, and its labels. */
import { ConfigError, nonEmpty } from './variables.ts';

/** The shortest MKOBA_METRICS_TOKEN accepted, in characters: a guessable token would protect nothing. */
export const METRICS_TOKEN_CHARS_MIN = 32;

/**
 * Who may scrape GET /metrics on the API listener, and what its series are labelled with.
 * `token` (MKOBA_METRICS_TOKEN): a scrape must send `Authorization: Bearer <token>`. Without one, pilot and
 * production do not serve /metrics at all (404); the sandbox serves it openly, for local development.
 * `resourceLabels` (MKOBA_METRICS_RESOURCE_LABELS=1): series keep subscription and rail partner ids as
 * labels; off by default, since ids of every organization would be on one page.
 */
export interface MetricsSettings {
  token: string | undefined;
  resourceLabels: boolean;
}

export function loadMetricsSettings(env: NodeJS.ProcessEnv): MetricsSettings {
  const token = nonEmpty(env.MKOBA_METRICS_TOKEN);
  if (token !== undefined && (token.length < METRICS_TOKEN_CHARS_MIN || /\s/.test(token))) {
    throw new ConfigError(
      'MKOBA_METRICS_TOKEN',
      `must be at least ${METRICS_TOKEN_CHARS_MIN} characters without spaces (e.g. openssl rand -hex 32)`,
    );
  }
  const labels = nonEmpty(env.MKOBA_METRICS_RESOURCE_LABELS);
  if (labels !== undefined && !['0', '1', 'true', 'false'].includes(labels.toLowerCase())) {
    throw new ConfigError('MKOBA_METRICS_RESOURCE_LABELS', `must be 1 (keep ids) or 0, got '${labels}'`);
  }
  return { token, resourceLabels: labels === '1' || labels?.toLowerCase() === 'true' };
}
