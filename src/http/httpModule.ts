/**
 * What a capability module hands the HTTP edge: the shared schemas its routes and others refer to by `$id`,
 * and the function that adds its routes. `src/modules/registry.ts` lists every module's, and
 * `src/http/app.ts` adds them all, schemas first.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../app/deps.ts';

/** The process's settings the HTTP edge hands every module's routes. */
export interface HttpRouteOptions {
  /** How many ledger writer lanes new transfers are spread over (src/config.ts). */
  ledgerWriterLanes: number;
}

export interface HttpModule {
  /** Named schemas (each with its `$id`), added before any route so every module's routes can refer to them. */
  readonly schemas: readonly { readonly $id: string }[];
  /** Adds the module's routes. */
  routes(app: FastifyInstance, deps: Deps, options: HttpRouteOptions): void;
  /**
   * Components that exist only in the OpenAPI document (a request body's variants, which routes validate
   * with their own code), by name.
   */
  readonly documentComponents?: Readonly<Record<string, object>>;
  /** Routes that exist only in the sandbox (a test clock, a simulated chain). */
  readonly sandboxOnly?: boolean;
}
