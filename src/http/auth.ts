/** Authentication on every route that declares a scope in its config; public routes declare none. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticate, type Principal } from '../app/apiKeys.ts';
import type { Deps } from '../app/deps.ts';
import { grantsScope, type Scope } from '../domain/apiKeys.ts';
import { AppError } from '../domain/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for this route; absent means the route is public. */
    scope?: Scope;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

export function registerAuth(app: FastifyInstance, deps: Deps): void {
  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    const principal = await authenticate(deps, request.headers.authorization);
    if (!grantsScope(principal.scopes, scope)) {
      throw new AppError({
        status: 403,
        code: 'insufficient_permissions',
        title: 'Forbidden',
        detail: `This API key lacks the '${scope}' scope this operation needs.`,
      });
    }
    request.principal = principal;
  });
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route has no scope in its config but reads the principal');
  return request.principal;
}

export const BEARER_SECURITY = [{ bearerAuth: [] }];
