/**
 * The console's static files: its own stylesheet and script, and the chart library (uPlot) straight from
 * node_modules, so there is no build step. A fixed list: no path from the URL ever reaches the file system.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/** Static files change only with a release; a browser may keep them this long. */
export const CONSOLE_STATIC_MAX_AGE_SECONDS = 3_600;

const require = createRequire(import.meta.url);
const own = (name: string) => fileURLToPath(new URL(`./assets/${name}`, import.meta.url));

const FILES: Record<string, { path: string; type: string }> = {
  'console.css': { path: own('console.css'), type: 'text/css; charset=utf-8' },
  'console.js': { path: own('console.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.iife.min.js': {
    path: require.resolve('uplot/dist/uPlot.iife.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'uPlot.min.css': { path: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

export function serveStatic(app: FastifyInstance): void {
  // Read once, at start-up: a missing file fails the start, not a page.
  const contents = new Map(Object.entries(FILES).map(([name, f]) => [name, readFileSync(f.path)]));
  app.get<{ Params: { file: string } }>(
    '/static/:file',
    { schema: { hide: true }, config: { consoleScope: 'public' } },
    async (request, reply) => {
      const file = FILES[request.params.file];
      const body = contents.get(request.params.file);
      if (!file || !body) return reply.callNotFound();
      return reply
        .header('Cache-Control', `public, max-age=${CONSOLE_STATIC_MAX_AGE_SECONDS}`)
        .type(file.type)
        .send(body);
    },
  );
}
