/** The fixed parts of the OpenAPI 3.1 document; paths and schemas come from the route definitions. */
import type { SwaggerTransformObject } from '@fastify/swagger';
import type { FastifyRequest, FastifySchema } from 'fastify';
import { PORT_DEFAULT } from '../config.ts';
import { API_VERSION } from '../domain/version.ts';
import { eventEnvelopeComponents, webhooksDocument } from './eventEnvelopeSchemas.ts';
import { DOCUMENTED_AS } from './schemas.ts';

export { API_VERSION };

export const OPENAPI_DOCUMENT_BASE = {
  openapi: '3.1.0',
  info: {
    title: 'Mkoba API',
    version: API_VERSION,
    summary: 'Wallets, transfers and signed webhooks on a double-entry ledger.',
    description:
      "All requests and responses are JSON. Errors are RFC 9457 `application/problem+json` with a stable `code`, the offending `param` and a `request_id`. Every POST, PUT, PATCH and DELETE accepts `Idempotency-Key`: a retry with the same key returns the first result instead of acting again, while without a key every request acts anew (two identical transfers are two transfers). Amounts are decimal strings at the currency's exact number of decimals.",
    license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
  },
  servers: [{ url: `http://127.0.0.1:${PORT_DEFAULT}`, description: 'Local sandbox (npm start)' }],
  tags: [
    { name: 'Customers', description: 'People and businesses who own wallets.' },
    { name: 'Wallets', description: 'Single-currency balances held for a customer.' },
    {
      name: 'Transfers',
      description: 'Money moving out of a wallet over a rail, or between wallets, with its status machine.',
    },
    {
      name: 'Events',
      description:
        'Every state change, recorded in the same transaction as the change: the payloads webhooks deliver.',
    },
    {
      name: 'Ledger',
      description: 'The double-entry ledger behind every balance: journal entries, postings and accounts.',
    },
    {
      name: 'Verifications',
      description:
        'KYC and KYB: identity data a customer submits, screened and decided; the customer’s `kyc_status` and tier follow.',
    },
    {
      name: 'AML',
      description:
        'Transaction-monitoring rules held as data per organization, and the alerts they open (the `compliance` scope).',
    },
    {
      name: 'Travel Rule',
      description:
        'Approved digital-asset routes and the Travel Rule: when a stablecoin transfer must carry originator and beneficiary data, and the data it carried (operators).',
    },
    {
      name: 'Reviews',
      description:
        'Compliance review cases (sanctions screening and AML) that hold a transfer for an operator (the `compliance` scope).',
    },
    {
      name: 'Evidence',
      description:
        'Compliance decisions, append-only and hash-chained per organization, for operators (the `compliance` scope).',
    },
    {
      name: 'Members',
      description:
        'The organization’s people with their signer roles; keys may act for a member (the `admin` scope).',
    },
    {
      name: 'API keys',
      description:
        'The organization’s keys and who created each (the `admin` scope); a member creates keys for themself only.',
    },
    {
      name: 'Policies',
      description:
        'Authorization policies: ordered rules, versioned, that allow, deny or send a transfer (or a policy change) for approval.',
    },
    {
      name: 'Fees',
      description:
        'Fee schedules per rail and currency (fixed, percentage with a minimum and maximum, tiers), versioned; quotes of what a transfer costs.',
    },
    {
      name: 'Approvals',
      description:
        'Requests for members to approve a resource, voted on once per member with a role the rule names, and decided once.',
    },
    {
      name: 'Changes',
      description:
        'Sensitive changes (role grants, elevated keys, rates, fee schedules, AML rules, digital-asset routes, rail partners, trust accounts, launch-gate overrides) waiting for the approval a `change` rule of the policy asks for, and what became of them.',
    },
    {
      name: 'Payment batches',
      description:
        'Many payouts from one wallet at once: checked whole, authorized as a whole, its total held, run in chunks of ordinary transfers.',
    },
    {
      name: 'Reconciliation',
      description:
        'Rail statements matched against the ledger, and the exception queue of every difference (the `compliance` scope).',
    },
    {
      name: 'Safeguarding',
      description:
        'Trust accounts holding customer money at partner banks (USDC and USDT at custodians), their reported closing balances, sweeps between rail floats and trust posted to the ledger’s trust account, and the daily check of customer money and the ledger against them.',
    },
    {
      name: 'Exports',
      description:
        'Asynchronous exports of history (transfers, ledger entries, events, evidence, reconciliation exceptions) to CSV or JSON lines.',
    },
    {
      name: 'Collections',
      description:
        'Money asked of a payer into a wallet: mobile-money request-to-pay, credited when the rail confirms.',
    },
    {
      name: 'Digital accounts',
      description:
        'Wallets as accounts outsiders pay into: account numbers with a check digit under the organization’s bank, statements of a period (JSON or CSV).',
    },
    {
      name: 'Stablecoins',
      description:
        'USDC and USDT money in and across: deposit addresses per wallet and network, deposits credited after their confirmations, and conversions between a fiat wallet and a stablecoin wallet at a quoted rate.',
    },
    {
      name: 'Savings',
      description:
        'Savings products (a rate by day, a day-count convention, a minimum balance, notice or a fixed term) and savings accounts: wallets of a product that accrue interest daily, exactly, and capitalise it monthly by the organization’s clock.',
    },
    {
      name: 'Lending',
      description:
        'Loan products and loans: application decided by the policy, disbursement to the borrower’s wallet, an exact schedule, repayments manual and automatic, arrears and penalty by the organization’s clock, write-off through the ledger.',
    },
    {
      name: 'Rail partners',
      description:
        'The partners (M-Pesa Daraja, MTN MoMo) that carry an organization’s rails, with sealed credentials, and the callbacks they sent.',
    },
    {
      name: 'Receipts',
      description: 'Receipts of settled transfers, printable, with a code anyone can verify.',
    },
    {
      name: 'Webhooks',
      description:
        'Subscriptions that receive signed events (Service-Signature, Stripe-compatible), their delivery logs, and recovery.',
    },
    {
      name: 'Organization',
      description:
        'Your organization: the legal entity whose KYB stands for it, the products it launches, its named contacts.',
    },
    {
      name: 'Launch gates',
      description:
        'What must pass, per product, before pilot or production keys are issued (docs/GOING-LIVE.md).',
    },
    {
      name: 'Sandbox',
      description:
        'Sandbox only: fund wallets and drive transfers to any outcome. Absent in pilot and production.',
    },
    { name: 'Operations', description: 'Health, readiness and metrics for operators.' },
  ],
  components: {
    securitySchemes: {
      bearerAuth: {
        type: 'http' as const,
        scheme: 'bearer',
        description:
          'An API key: `sk_sandbox_…` in the sandbox, `sk_pilot_…` in a pilot, `sk_live_…` in production.',
      },
    },
  },
};

/** Where the reference page is served; its assets are under `${DOCS_ROUTE_PREFIX}/static/`. */
export const DOCS_ROUTE_PREFIX = '/docs';
/** Where the document is served; the reference page's explorer reads it from here. */
export const OPENAPI_DOCUMENT_PATH = '/v1/openapi.json';
/** The reference page's title, in the browser tab and the explorer's definition picker. */
export const DOCS_TITLE = `${OPENAPI_DOCUMENT_BASE.info.title} reference`;

/** The reference page's top-bar logo, in place of the UI's own: Mkoba's name, white on its dark bar. */
export const DOCS_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40" role="img" aria-label="${OPENAPI_DOCUMENT_BASE.info.title}"><text x="0" y="29" font-family="system-ui, sans-serif" font-size="26" font-weight="700" fill="#ffffff">${OPENAPI_DOCUMENT_BASE.info.title}</text></svg>`;

/** The reference page's favicon: an M, in place of the UI's own icons. */
export const DOCS_FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b6e4f"/><text x="16" y="23" text-anchor="middle" font-family="system-ui, sans-serif" font-size="20" font-weight="700" fill="#ffffff">M</text></svg>';

/**
 * The reference page loads nothing from another origin: every script, style, font and image is served
 * by this process (Swagger UI's own logo and icons are inline `data:` images), so it works offline.
 * Unlike @fastify/swagger-ui's default policy, it allows no `https:` styles or fonts and does not send
 * `upgrade-insecure-requests`, which breaks the page over plain HTTP on any host but localhost.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self'",
].join('; ');

const SERVED_FROM = 'The server this document was served from';

/** A Host as a client may send it: a name or IPv4 address, or a bracketed IPv6 address, maybe a port. */
const HOST_PATTERN = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The document as served to a request: its server is the address the request came to, so "Try it out"
 * and generated clients reach this server. `request.protocol` and `request.host` follow X-Forwarded-Proto
 * and X-Forwarded-Host only when Fastify's `trustProxy` trusts the proxy; a Host that is not a host name
 * gives the relative URL `/` rather than a URL built from arbitrary text.
 */
export function documentForRequest<T extends object>(
  document: T,
  request: FastifyRequest,
): T & { servers: object[] } {
  const host: unknown = request.host;
  const url = typeof host === 'string' && HOST_PATTERN.test(host) ? `${request.protocol}://${host}` : '/';
  return { ...document, servers: [{ url, description: SERVED_FROM }] };
}

/**
 * Components that exist only in the document (transfer destinations, verification submissions), by name:
 * a route's schema marked `DOCUMENTED_AS` a name is documented as a reference to that component.
 */
export type DocumentComponents = Readonly<Record<string, object>>;

function replaceMarkedSchemas(node: unknown, components: DocumentComponents): unknown {
  if (Array.isArray(node)) return node.map((item) => replaceMarkedSchemas(item, components));
  if (node === null || typeof node !== 'object') return node;
  const name = (node as Record<string, unknown>)[DOCUMENTED_AS];
  if (typeof name === 'string') {
    if (!(name in components)) throw new Error(`no document-only schema named ${name}`);
    return { $ref: `#/components/schemas/${name}` };
  }
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, replaceMarkedSchemas(value, components)]),
  );
}

/**
 * @fastify/swagger's whole-document transform: every schema marked `DOCUMENTED_AS` becomes a reference
 * to that component, the document-only components are added, and the `webhooks` (each event type's
 * delivery, from src/http/eventSchemas.ts) with their envelope components.
 */
export function documentObject(components: DocumentComponents): SwaggerTransformObject {
  return (input) => {
    if (!('openapiObject' in input)) throw new Error('only OpenAPI 3 documents are generated');
    const document = replaceMarkedSchemas(input.openapiObject, components) as typeof input.openapiObject & {
      components?: { schemas?: Record<string, unknown> };
    };
    return {
      ...document,
      webhooks: replaceMarkedSchemas(webhooksDocument(), components),
      components: {
        ...document.components,
        schemas: {
          ...document.components?.schemas,
          ...components,
          ...(replaceMarkedSchemas(eventEnvelopeComponents(), components) as Record<string, unknown>),
        },
      },
    } as typeof input.openapiObject;
  };
}

/** Request headers as the document spells them; route schemas name them in lower case. */
export const DOCUMENTED_HEADER_NAMES = ['Idempotency-Key', 'Consistency-Token'] as const;

const CANONICAL_HEADER_NAMES = new Map<string, string>(
  DOCUMENTED_HEADER_NAMES.map((n) => [n.toLowerCase(), n]),
);

function canonicalHeaderName(name: string): string {
  return CANONICAL_HEADER_NAMES.get(name.toLowerCase()) ?? name;
}

interface HeadersSchema {
  properties?: Record<string, unknown>;
  required?: string[];
}

/**
 * @fastify/swagger's per-route transform: documents each request header under its canonical name
 * (`Idempotency-Key`, not `idempotency-key`). Validation keeps using the route's own schema.
 */
export function documentRouteSchema({ schema, url }: { schema: FastifySchema | undefined; url: string }): {
  schema: FastifySchema;
  url: string;
} {
  const headers = schema?.headers as HeadersSchema | undefined;
  if (schema === undefined || headers?.properties === undefined)
    return { schema: schema as FastifySchema, url };
  const properties = Object.fromEntries(
    Object.entries(headers.properties).map(([name, property]) => [canonicalHeaderName(name), property]),
  );
  const required = headers.required?.map(canonicalHeaderName);
  return {
    url,
    schema: {
      ...schema,
      headers: { ...headers, properties, ...(required === undefined ? {} : { required }) },
    },
  };
}

interface OperationWithBody {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: { type?: unknown } }> };
}

/**
 * @fastify/swagger marks every request body required. A route whose body schema admits `null` takes no body
 * at all (rotate-secret's and the sandbox's fail are optional), so the document says `required: false`
 * there, as the server behaves; a validator such as Prism then accepts a call without one, and a generated
 * client makes it optional.
 */
export function documentOptionalBodies<T extends object>(object: T): T {
  const paths = (object as { paths?: Record<string, Record<string, unknown>> }).paths ?? {};
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item) as OperationWithBody[]) {
      const body = operation?.requestBody;
      const type = body?.content?.['application/json']?.schema?.type;
      if (body && Array.isArray(type) && type.includes('null')) body.required = false;
    }
  }
  return object;
}
