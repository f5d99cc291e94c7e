/**
 * What a capability module hands the HTTP edge: the shared schemas its routes and others refer to by `$id`,
 * and the function that adds its routes. `src/modules/registry.ts` lists every module's, and
 * `src/http/app.ts` adds them all, schemas first.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../app/deps.ts';

export interface HttpModule {
  /** Named schemas (each with its `$id`), added before any route so every module's routes can refer to them. */
  readonly schemas: readonly { readonly $id: string }[];
  /** Adds the module's routes. */
  routes(app: FastifyInstance, deps: Deps): void;
  /** Routes that exist only in the sandbox (a test clock, a simulated chain). */
  readonly sandboxOnly?: boolean;
}
