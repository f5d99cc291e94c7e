/**
 * Groups of routes added as one, in the order the OpenAPI document lists them: a module's routes, or a
 * resource's within it. A group is a list of the functions that add each route (or a smaller group), not a
 * function that calls each in turn.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../app/deps.ts';

/** A function that adds a route, or a group of them, to the app. */
export type AddRoutes = (app: FastifyInstance, deps: Deps) => void;

/** The routes each of `adders` adds, added in the order given. */
export function routesInOrder(...adders: readonly AddRoutes[]): AddRoutes {
  return (app, deps) => {
    for (const add of adders) add(app, deps);
  };
}
