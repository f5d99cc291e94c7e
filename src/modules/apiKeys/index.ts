/**
 * API keys: keys issued to an organization (by an operator, or by a member for themself, as a governed
 * change), listed and revoked, each with its environment, scopes and the member it acts for. Authenticating a
 * request by its key is the core's (src/app/apiKeyAuthentication.ts, src/domain/access.ts).
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { API_KEY_SCHEMAS, apiKeyRoutes } from './routes.ts';

export { listApiKeys } from './repository.ts';
export {
  API_KEY_DESCRIPTION_CHARS_MAX,
  checkOperatorName,
  issueApiKeyIn,
  issueOperatorKey,
  listOrganizationKeys,
  revokeKey,
  revokeOrganizationKeyIn,
} from './useCases/keys.ts';
export { applyPendingOwnKey, parsePendingKeyPayload } from './useCases/ownKeyIssuing.ts';
export { createOwnApiKeyGoverned, type OwnKeyOutcome } from './useCases/ownKeys.ts';

/** The module's face on the HTTP edge. */
export const apiKeysHttp: HttpModule = { schemas: API_KEY_SCHEMAS, routes: apiKeyRoutes };
