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
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ConsoleIdentity, loadSession } from '../app/console/session.ts';
import type { Deps } from '../app/deps.ts';
import { runIdempotent } from '../app/idempotency.ts';
import { grantsScope, type Scope } from '../domain/access.ts';
import { CONSOLE_SESSION_IDLE_MINUTES, csrfTokenMatches } from '../domain/console.ts';
import { AppError } from '../domain/errors.ts';
import { requestFingerprint } from '../domain/idempotency.ts';
import { toAppError } from '../http/problems.ts';
import type { AuthFailureLimiter } from '../http/rateLimit.ts';
import { html, type SafeHtml } from './html.ts';
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
import { railPartnerPages } from './pages/railPartners.ts';
import { reconciliationPages } from './pages/reconciliation.ts';
import { signInPages } from './pages/signIn.ts';
import { statementPages } from './pages/statements.ts';
import { transferPages } from './pages/transfers.ts';
import { webhookPages } from './pages/webhooks.ts';
import {
  type ConsoleRoutes,
  clearSessionCookie,
  type FormBody,
  field,
  type Handler,
  presessionCookieName,
  sessionCookieName,
} from './routing.ts';
import { serveStatic } from './static.ts';

/** A console form is small: a comment, a few fields. */
export const CONSOLE_FORM_BYTES_MAX = 64 * 1024;
/** A form's idempotency key: what the page renders into `_form`. */
const FORM_KEY_PATTERN = /^[A-Za-z0-9_-]{22,64}$/;

/**
 * The Content-Security-Policy of every console page: scripts, styles and images from this origin only, no
 * framing, forms posted only here.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'";

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

/** Parses URL-encoded forms, only in this context (the API stays JSON only); a repeated field becomes a list. */
function acceptForms(app: FastifyInstance): void {
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
}

/** The security headers every console answer carries. */
function sendSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
    reply.header('X-Frame-Options', 'DENY');
    reply.header('X-Content-Type-Options', 'nosniff');
    // A sign-in link carries its token in the URL: never sent to another origin as a referrer. (Not
    // no-referrer: with it, browsers send `Origin: null` on this console's own forms.)
    reply.header('Referrer-Policy', 'same-origin');
    reply.header('Cache-Control', 'no-store');
  });
}

/** Renders a page in the console's shell, as HTML. */
function pageRenderer(deps: Deps): ConsoleRoutes['render'] {
  return (reply, o) =>
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
}

const FORM_EXPIRED = 'The form expired or did not come from this console. Reload the page and try again.';

/** A sign-in form's POST must carry the pre-session cookie's CSRF token and come from this host. */
function checkPublicForm(request: FastifyRequest): void {
  if (request.method !== 'POST') return;
  const token = request.cookies[presessionCookieName(request)];
  if (
    !originMatches(request) ||
    token === undefined ||
    !csrfTokenMatches(token, field(request.body, '_csrf'))
  ) {
    throw forbidden(FORM_EXPIRED);
  }
}

/** A member's POST must carry their session's CSRF token and come from this host; and the page's scope. */
function checkMemberRequest(request: FastifyRequest, identity: ConsoleIdentity, scope: Scope): void {
  if (request.method === 'POST') {
    if (!originMatches(request) || !csrfTokenMatches(identity.token, field(request.body, '_csrf'))) {
      throw forbidden(FORM_EXPIRED);
    }
  }
  if (!grantsScope(identity.scopes, scope)) {
    throw forbidden(
      `Your roles (${identity.member.roles.join(', ')}) do not allow this: it needs the '${scope}' scope.`,
    );
  }
}

/**
 * Before every console page: a public page checks only its form; any other loads the member's session
 * (without a live one, a redirect to sign-in that comes back here) and checks the request against it.
 */
function requireSession(app: FastifyInstance, deps: Deps): void {
  app.addHook('preHandler', async (request, reply) => {
    const scope = request.routeOptions.config.consoleScope;
    if (scope === undefined) return;
    if (scope === 'public') return checkPublicForm(request);
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
    checkMemberRequest(request, identity, scope);
  });
}

/** Errors and unknown paths as console pages (a 5xx names the request, never its cause). */
function renderErrors(app: FastifyInstance, render: ConsoleRoutes['render']): void {
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
}

/** Runs a form's write once per rendered form: its `_form` field keys the idempotent write. */
function formWriter(deps: Deps): ConsoleRoutes['write'] {
  return (request, identity, effect) => {
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
  };
}

/** What the page modules register with: each member route carries its scope for `requireSession`. */
function consoleRoutes(
  app: FastifyInstance,
  options: ConsoleOptions,
  render: ConsoleRoutes['render'],
): ConsoleRoutes {
  const { deps } = options;
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
  return {
    deps,
    limiter: options.limiter,
    get: (path, scope, handler) => register('GET', path, scope, handler),
    post: (path, scope, handler) => register('POST', path, scope, handler),
    publicRoute: (method, path, handler) =>
      app.route({ method, url: path, config: { consoleScope: 'public' }, schema: { hide: true }, handler }),
    render,
    formKey: () => Buffer.from(deps.randomBytes(24)).toString('base64url'),
    write: formWriter(deps),
  };
}

/** The page modules, registered in this order. */
const PAGE_MODULES: ((routes: ConsoleRoutes) => void)[] = [
  signInPages,
  accountPages,
  homePage,
  transferPages,
  customerPages,
  approvalPages,
  compliancePages,
  reconciliationPages,
  batchPages,
  webhookPages,
  apiKeyPages,
  exportPages,
  launchGatePages,
  statementPages,
  railPartnerPages,
];

export async function consolePlugin(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const { deps } = options;
  await app.register(cookie);
  acceptForms(app);
  sendSecurityHeaders(app);
  const render = pageRenderer(deps);
  requireSession(app, deps);
  renderErrors(app, render);
  const routes = consoleRoutes(app, options, render);
  serveStatic(app);
  for (const registerPages of PAGE_MODULES) registerPages(routes);
}

/** The idle limit as the sign-in page says it. */
export const IDLE_SENTENCE = `Sessions end after ${CONSOLE_SESSION_IDLE_MINUTES} minutes without activity.`;

export type { SafeHtml };
