/** Authentication on every route that declares a scope in its config; public routes declare none. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorIdOf, authenticate, type Principal } from '../app/apiKeyAuthentication.ts';
import type { Deps } from '../app/deps.ts';
import { apiKeyActor } from '../app/evidence.ts';
import { grantsScope, type Scope } from '../domain/access.ts';
import { AppError } from '../domain/errors.ts';
import type { EvidenceActor } from '../domain/evidence.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for this route; absent means the route is public. */
    scope?: Scope;
    /** The route takes a `text/csv` body too (a payment batch upload). */
    acceptsCsv?: boolean;
    /**
     * The route takes its body as the exact text sent, whatever its type (a partner's callback, kept byte
     * for byte so it can be stored and a signature checked over it).
     */
    rawBody?: boolean;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** The protection space named in every `WWW-Authenticate` challenge. */
export const AUTH_REALM = 'mkoba';

/** An RFC 6750 auth-param value: a quoted string of the characters it allows (no `"` or `\`). */
function quoted(value: string): string {
  return `"${value.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '')}"`;
}

/**
 * The `WWW-Authenticate` challenge of a refused request (RFC 6750 section 3): a request with no key gets
 * only the scheme and realm; a key that was sent and refused is an `invalid_token`; a key without the
 * route's scope is `insufficient_scope`.
 */
export function bearerChallenge(error: AppError, scope: Scope): string | undefined {
  if (error.status !== 401 && error.status !== 403) return undefined;
  const params = [`realm=${quoted(AUTH_REALM)}`];
  if (error.status === 403) {
    params.push(`error=${quoted('insufficient_scope')}`, `scope=${quoted(scope)}`);
  } else if (error.code !== 'api_key_missing') {
    params.push(`error=${quoted('invalid_token')}`, `error_description=${quoted(error.detail)}`);
  }
  return `Bearer ${params.join(', ')}`;
}

function checkScope(principal: Principal, scope: Scope): void {
  if (!grantsScope(principal.scopes, scope)) {
    throw new AppError({
      status: 403,
      code: 'insufficient_permissions',
      title: 'Forbidden',
      detail: `This API key lacks the '${scope}' scope this operation needs.`,
    });
  }
}

export function registerAuth(app: FastifyInstance, deps: Deps): void {
  app.addHook('onRequest', async (request, reply) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    try {
      const principal = await authenticate(deps, request.headers.authorization);
      checkScope(principal, scope);
      request.principal = principal;
    } catch (error) {
      const challenge = error instanceof AppError ? bearerChallenge(error, scope) : undefined;
      if (challenge !== undefined) reply.header('WWW-Authenticate', challenge);
      throw error;
    }
  });
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route has no scope in its config but reads the principal');
  return request.principal;
}

export const BEARER_SECURITY = [{ bearerAuth: [] }];

/** Who is acting, as evidence records it: the request's API key and the member it acts for, if any. */
export function requestActor(request: FastifyRequest): EvidenceActor {
  const principal = principalOf(request);
  return apiKeyActor(principal.keyId, principal.member?.id);
}

/**
 * The request's API key alone as evidence's actor, without the member it acts for: what the Travel Rule's
 * settings and routes record.
 */
export function requestKeyActor(request: FastifyRequest): EvidenceActor {
  return apiKeyActor(principalOf(request).keyId);
}

/** Who is acting, as a record's `created_by` names them: the member the request's key acts for, else the key. */
export function requestActorId(request: FastifyRequest): string {
  return actorIdOf(principalOf(request));
}
