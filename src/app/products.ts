/**
 * Products switched on per organization: a route or a movement of a product family the organization has
 * not enabled is refused 403 `product_not_enabled`, naming the product. The HTTP edge checks a route's
 * `product` once per request (src/http/products.ts); the use cases that create a movement (transfers, and
 * through them payment batches; conversion quotes and their execution; loans; savings accounts; account
 * details) check it again, so a worker or a batch cannot pass by the edge.
 *
 * Each process keeps an organization's products for PRODUCTS_CACHE_TTL_MS, so a transfer reads them at
 * most that often; a change made in this process applies at once, one made in another within that time.
 */
import { AppError } from '../domain/errors.ts';
import { enabledProducts, type LaunchProduct, productOfMovement } from '../domain/organizationProfile.ts';
import type { Rail } from '../domain/transfers.ts';
import { findProfile } from '../store/repositories/organizationProfiles.ts';
import type { Queryable, Store } from '../store/store.ts';
import type { Deps } from './deps.ts';
import { mapForStore } from './processCaches.ts';

/** How long a process trusts the products it read for an organization. */
export const PRODUCTS_CACHE_TTL_MS = 5_000;

const cache = new WeakMap<Store, Map<string, { products: readonly LaunchProduct[]; readAt: number }>>();

/** Forgets an organization's products in this process (after its profile changed). */
export function forgetOrganizationProducts(deps: Deps, organizationId: string): void {
  cache.get(deps.store)?.delete(organizationId);
}

/** The products the organization may use (`enabledProducts`). */
export async function organizationProducts(
  deps: Deps,
  organizationId: string,
  db: Queryable = deps.store,
): Promise<readonly LaunchProduct[]> {
  const entries = mapForStore(cache, deps.store);
  const now = Date.now();
  const cached = entries.get(organizationId);
  if (cached && now - cached.readAt < PRODUCTS_CACHE_TTL_MS) return cached.products;
  const profile = await findProfile(db, organizationId);
  const products = enabledProducts(profile?.products, deps.environment === 'sandbox');
  entries.set(organizationId, { products, readAt: now });
  return products;
}

export function productNotEnabled(product: LaunchProduct, param?: string): AppError {
  return new AppError({
    status: 403,
    code: 'product_not_enabled',
    title: 'Product not enabled',
    detail: `The organization has not enabled the '${product}' product; an admin enables it with PATCH /v1/organization (products).`,
    ...(param === undefined ? {} : { param }),
    extensions: { product },
  });
}

/** A 403 `product_not_enabled` unless the organization has the product. */
export async function requireProduct(
  deps: Deps,
  organizationId: string,
  product: LaunchProduct,
  param?: string,
  /** The caller's transaction, when it has one (the read must not wait for another connection). */
  db: Queryable = deps.store,
): Promise<void> {
  const products = await organizationProducts(deps, organizationId, db);
  if (!products.includes(product)) throw productNotEnabled(product, param);
}

/** A 403 `product_not_enabled` unless the organization has the product a movement's rail and currency belong to. */
export async function requireProductOfMovement(
  deps: Deps,
  organizationId: string,
  movement: { rail: Rail; currency: string },
  param?: string,
  db: Queryable = deps.store,
): Promise<void> {
  const product = productOfMovement(movement);
  if (product !== undefined) await requireProduct(deps, organizationId, product, param, db);
}
