/**
 * The operator console at /console: server-rendered pages for members, in an encapsulated Fastify
 * context of its own (form bodies, cookies, HTML errors), served by `mkoba serve` beside the API.
 *
 * Every page loads the member's session first (a redirect to sign-in without one), then checks the scope
 * its API route needs against what the member's roles grant now, and every POST checks the form's CSRF
 * token (and, when the browser sends one, that the Origin is this host). Writes run the same use cases
 * as the API, each once per rendered form (the form's key is an idempotency key).
 */
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ConsoleIdentity, loadSession } from '../app/console/session.ts';
import type { Deps } from '../app/deps.ts';
import { type IdempotentOutcome, runIdempotent, type WriteResult } from '../app/idempotency.ts';
import { grantsScope, type Scope } from '../domain/apiKeys.ts';
import {
  CONSOLE_SESSION_COOKIE_PLAIN,
  CONSOLE_SESSION_COOKIE_SECURE,
  CONSOLE_SESSION_IDLE_MINUTES,
  csrfTokenMatches,
} from '../domain/console.ts';
import { AppError } from '../domain/errors.ts';
import { requestFingerprint } from '../domain/idempotency.ts';
import { toAppError } from '../http/problems.ts';
import type { AuthFailureLimiter } from '../http/rateLimit.ts';
import type { Queryable } from '../store/store.ts';
import { html, type Renderable, type SafeHtml } from './html.ts';
import { CONSOLE_PREFIX, link, page } from './layout.ts';
import { accountPages } from './pages/account.ts';
import { apiKeyPages } from './pages/apiKeys.ts';
import { approvalPages } from './pages/approvals.ts';
import { batchPages } from './pages/batches.ts';
import { compliancePages } from './pages/compliance.ts';
import { customerPages } from './pages/customers.ts';
import { exportPages } from './pages/exports.ts';
import { homePage } from './pages/home.ts';
import { launchGatePages } from './pages/launchGates.ts';
import { reconciliationPages } from './pages/reconciliation.ts';
import { signInPages } from './pages/signIn.ts';
import { statementPages } from './pages/statements.ts';
import { transferPages } from './pages/transfers.ts';
import { webhookPages } from './pages/webhooks.ts';
import { serveStatic } from './static.ts';

/** A console form is small: a comment, a few fields. */
export const CONSOLE_FORM_BYTES_MAX = 64 * 1024;
/** The pre-session cookie that keys the CSRF token of the sign-in forms (login CSRF). */
const PRESESSION_COOKIE_SECURE = '__Host-mkoba_console_pre';
const PRESESSION_COOKIE_PLAIN = 'mkoba_console_pre';
/** A form's idempotency key: what the page renders into `_form`. */
const FORM_KEY_PATTERN = /^[A-Za-z0-9_-]{22,64}$/;

/**
 * The Content-Security-Policy of every console page: scripts, styles and images from this origin only, no
 * framing, forms posted only here.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'";

export type FormBody = Record<string, string | string[] | undefined>;

declare module 'fastify' {
  interface FastifyRequest {
    consoleIdentity?: ConsoleIdentity;
  }
  interface FastifyContextConfig {
    /** A console page: the scope its member needs, or 'public' (the sign-in pages). */
    consoleScope?: Scope | 'public';
  }
}

export interface ConsoleOptions {
  deps: Deps;
  /** The failed-authentication limiter the API keys use; undefined when rate limits are off. */
  limiter: AuthFailureLimiter | undefined;
}

export type Handler = (
  request: FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, string> }>,
  reply: FastifyReply,
  identity: ConsoleIdentity,
) => Promise<unknown>;

/** What each page module registers its routes with. */
export interface ConsoleRoutes {
  deps: Deps;
  limiter: AuthFailureLimiter | undefined;
  get(path: string, scope: Scope, handler: Handler): void;
  post(path: string, scope: Scope, handler: Handler): void;
  /** Routes reachable without a session (sign-in). */
  publicRoute(
    method: 'GET' | 'POST',
    path: string,
    handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  ): void;
  render(
    reply: FastifyReply,
    options: {
      status?: number;
      title: string;
      identity?: ConsoleIdentity | undefined;
      section?: string;
      notice?: string | undefined;
      error?: string | undefined;
      body: Renderable;
    },
  ): FastifyReply;
  /** Runs a write once per rendered form, in one transaction; a replay answers with what the first did. */
  write(
    request: FastifyRequest,
    identity: ConsoleIdentity,
    effect: (tx: Queryable) => Promise<WriteResult>,
  ): Promise<IdempotentOutcome>;
  /** A fresh key for a form (its `_form` field). */
  formKey(): string;
}

/** Plain HTTP to a loopback host: the one case where the session cookie cannot be `Secure`. */
export function isPlainLocalhost(request: FastifyRequest): boolean {
  if (request.protocol !== 'http') return false;
  const host = request.hostname
    .replace(/:\d+$/, '')
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  return (
    host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}

export function sessionCookieName(request: FastifyRequest): string {
  return isPlainLocalhost(request) ? CONSOLE_SESSION_COOKIE_PLAIN : CONSOLE_SESSION_COOKIE_SECURE;
}

function presessionCookieName(request: FastifyRequest): string {
  return isPlainLocalhost(request) ? PRESESSION_COOKIE_PLAIN : PRESESSION_COOKIE_SECURE;
}

export function cookieOptions(request: FastifyRequest) {
  return { path: '/', httpOnly: true, sameSite: 'strict' as const, secure: !isPlainLocalhost(request) };
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(sessionCookieName(request), token, cookieOptions(request));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(sessionCookieName(request), cookieOptions(request));
}

/** The pre-session token (set on first sight), whose HMAC is the CSRF token of the sign-in forms. */
export function presessionToken(deps: Deps, request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[presessionCookieName(request)];
  if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = Buffer.from(deps.randomBytes(32)).toString('base64url');
  reply.setCookie(presessionCookieName(request), token, cookieOptions(request));
  return token;
}

/** Only console paths: a `next` parameter never sends the member elsewhere. */
export function safeNext(value: unknown): string {
  return typeof value === 'string' &&
    /^\/console(\/[A-Za-z0-9_\-/]*)?(\?[^\s]*)?$/.test(value) &&
    !value.startsWith('//')
    ? value
    : CONSOLE_PREFIX;
}

/** A single text field of a form (the first, when sent twice). */
export function field(body: unknown, name: string): string | undefined {
  const value = (body as FormBody | undefined)?.[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined ? undefined : text;
}

function originMatches(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined || origin === 'null') return origin === undefined;
  try {
    return new URL(origin).host === request.host;
  } catch {
    return false;
  }
}

/** A console request refused before its handler: a 403 page. */
function forbidden(detail: string): AppError {
  return new AppError({ status: 403, code: 'insufficient_permissions', title: 'Refused', detail });
}

export async function consolePlugin(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const { deps } = options;
  await app.register(cookie);
  // Forms arrive URL-encoded; only in this context (the API stays JSON only).
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: CONSOLE_FORM_BYTES_MAX },
    (_request, body, done) => {
      const form: FormBody = {};
      for (const [key, value] of new URLSearchParams(String(body))) {
        const existing = form[key];
        form[key] =
          existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
      }
      done(null, form);
    },
  );

  app.addHook('onRequest', async (_request, reply) => {
    reply.header('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
    reply.header('X-Frame-Options', 'DENY');
    reply.header('X-Content-Type-Options', 'nosniff');
    // A sign-in link carries its token in the URL: never sent to another origin as a referrer. (Not
    // no-referrer: with it, browsers send `Origin: null` on this console's own forms.)
    reply.header('Referrer-Policy', 'same-origin');
    reply.header('Cache-Control', 'no-store');
  });

  const render: ConsoleRoutes['render'] = (reply, o) =>
    reply
      .code(o.status ?? 200)
      .type('text/html; charset=utf-8')
      .send(
        page({
          title: o.title,
          identity: o.identity,
          section: o.section,
          notice: o.notice,
          error: o.error,
          environment: deps.environment,
          body: o.body,
        }).text,
      );

  app.addHook('preHandler', async (request, reply) => {
    const scope = request.routeOptions.config.consoleScope;
    if (scope === undefined) return;
    if (scope === 'public') {
      if (request.method === 'POST') {
        const token = request.cookies[presessionCookieName(request)];
        if (
          !originMatches(request) ||
          token === undefined ||
          !csrfTokenMatches(token, field(request.body, '_csrf'))
        ) {
          throw forbidden(
            'The form expired or did not come from this console. Reload the page and try again.',
          );
        }
      }
      return;
    }
    const found = await loadSession(deps, request.cookies[sessionCookieName(request)]);
    if (found.state !== 'live') {
      if (found.state === 'expired') clearSessionCookie(request, reply);
      const next = request.method === 'GET' ? request.url : CONSOLE_PREFIX;
      const params = new URLSearchParams({ next });
      if (found.state === 'expired') params.set('expired', found.reason);
      return reply.redirect(`${CONSOLE_PREFIX}/sign-in?${params.toString()}`, 303);
    }
    const identity = found.identity;
    request.consoleIdentity = identity;
    if (request.method === 'POST') {
      if (!originMatches(request) || !csrfTokenMatches(identity.token, field(request.body, '_csrf'))) {
        throw forbidden('The form expired or did not come from this console. Reload the page and try again.');
      }
    }
    if (!grantsScope(identity.scopes, scope)) {
      throw forbidden(
        `Your roles (${identity.member.roles.join(', ')}) do not allow this: it needs the '${scope}' scope.`,
      );
    }
  });

  app.setErrorHandler((thrown, request, reply) => {
    const error = toAppError(thrown);
    if (error.status >= 500) request.log.error({ err: thrown }, 'console request failed');
    if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.retryAfterSeconds));
    const detail =
      error.status >= 500 ? `Something went wrong on our side (request ${request.id}).` : error.detail;
    return render(reply, {
      status: error.status,
      title: error.status === 404 ? 'Not found' : error.status === 403 ? 'Not allowed' : error.title,
      identity: request.consoleIdentity,
      error: detail,
      body: html`<p>${link(CONSOLE_PREFIX, 'Back to the console home')}</p>`,
    });
  });

  app.setNotFoundHandler((request, reply) =>
    render(reply, {
      status: 404,
      title: 'Not found',
      error: `There is no console page ${request.url.split('?')[0]}.`,
      body: html`<p>${link(CONSOLE_PREFIX, 'Console home')}</p>`,
    }),
  );

  const register = (method: 'GET' | 'POST', path: string, scope: Scope, handler: Handler) => {
    app.route({
      method,
      url: path,
      config: { consoleScope: scope },
      schema: { hide: true },
      handler: (request, reply) =>
        handler(
          request as FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, string> }>,
          reply,
          request.consoleIdentity as ConsoleIdentity,
        ),
    });
  };

  const routes: ConsoleRoutes = {
    deps,
    limiter: options.limiter,
    get: (path, scope, handler) => register('GET', path, scope, handler),
    post: (path, scope, handler) => register('POST', path, scope, handler),
    publicRoute: (method, path, handler) =>
      app.route({ method, url: path, config: { consoleScope: 'public' }, schema: { hide: true }, handler }),
    render,
    formKey: () => Buffer.from(deps.randomBytes(24)).toString('base64url'),
    write: (request, identity, effect) => {
      const form = { ...(request.body as FormBody | undefined) };
      const formKey =
        typeof form._form === 'string' && FORM_KEY_PATTERN.test(form._form) ? form._form : undefined;
      delete form._csrf;
      delete form._form;
      const path = request.url.split('?')[0] ?? request.url;
      return runIdempotent(
        deps,
        {
          organizationId: identity.organizationId,
          key: formKey === undefined ? undefined : `console_${formKey}`,
          method: 'POST',
          path,
          fingerprint: requestFingerprint('POST', path, form),
          requestId: request.id,
        },
        effect,
      );
    },
  };

  serveStatic(app);
  signInPages(routes);
  accountPages(routes);
  homePage(routes);
  transferPages(routes);
  customerPages(routes);
  approvalPages(routes);
  compliancePages(routes);
  reconciliationPages(routes);
  batchPages(routes);
  webhookPages(routes);
  apiKeyPages(routes);
  exportPages(routes);
  launchGatePages(routes);
  statementPages(routes);
}

/** Turns a recorded failure into the error it was, so the error page shows it (a replay shows it again). */
export function settle(outcome: IdempotentOutcome): unknown {
  const body = JSON.parse(outcome.text) as { detail?: string; title?: string; code?: string };
  if (outcome.status >= 400) {
    throw new AppError({
      status: outcome.status,
      code: (body.code ?? 'validation_error') as AppError['code'],
      title: body.title ?? 'Refused',
      detail: body.detail ?? 'Refused.',
    });
  }
  return body;
}

/** The idle limit as the sign-in page says it. */
export const IDLE_SENTENCE = `Sessions end after ${CONSOLE_SESSION_IDLE_MINUTES} minutes without activity.`;

export type { SafeHtml };
