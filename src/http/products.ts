/**
 * Products per organization at the edge: a route whose config names a `product` answers 403
 * `product_not_enabled` (naming it) to an organization that has not enabled it, once per request, after
 * the key is authenticated and before the body is read. The use cases that create movements check again
 * (src/app/products.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../app/deps.ts';
import { requireProduct } from '../app/products.ts';
import type { LaunchProduct } from '../domain/organizationProfile.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The product family the route belongs to; absent: every organization may use it. */
    product?: LaunchProduct;
  }
}

export function registerProductCheck(app: FastifyInstance, deps: Deps): void {
  app.addHook('onRequest', async (request) => {
    const product = request.routeOptions.config.product;
    if (product === undefined || request.principal === undefined) return;
    await requireProduct(deps, request.principal.organizationId, product);
  });
}
