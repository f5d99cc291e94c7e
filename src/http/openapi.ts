/** The fixed parts of the OpenAPI 3.1 document; paths and schemas come from the route definitions. */
import { PORT_DEFAULT } from '../config.ts';

export const API_VERSION = '2026-11-22';

export const OPENAPI_DOCUMENT_BASE = {
  openapi: '3.1.0',
  info: {
    title: 'Mkoba API',
    version: API_VERSION,
    summary: 'Wallets, transfers and signed webhooks on a double-entry ledger.',
    description:
      "All requests and responses are JSON. Errors are RFC 9457 `application/problem+json` with a stable `code`, the offending `param` and a `request_id`. Every POST accepts `Idempotency-Key`. Amounts are decimal strings at the currency's exact number of decimals.",
    license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
  },
  servers: [{ url: `http://127.0.0.1:${PORT_DEFAULT}`, description: 'Local sandbox (npm start)' }],
  tags: [
    { name: 'Customers', description: 'People and businesses who own wallets.' },
    { name: 'Wallets', description: 'Single-currency balances held for a customer.' },
    { name: 'Operations', description: 'Health, readiness and metrics for operators.' },
  ],
  components: {
    securitySchemes: {
      bearerAuth: {
        type: 'http' as const,
        scheme: 'bearer',
        description: 'An API key: `sk_sandbox_…` in the sandbox, `sk_live_…` in production.',
      },
    },
  },
};
