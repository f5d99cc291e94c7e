/**
 * One server span per request when traces are on: named by method and route pattern (`POST /v1/transfers`),
 * never the URL (its path holds ids, its query input), with the status code. The request's hooks and its
 * handler run with it active, so the statements, writer batch and outbound calls they make are its children.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SpanHandle, Tracing } from '../telemetry/tracing.ts';

const spans = new WeakMap<FastifyRequest, SpanHandle>();

export function registerRequestTracing(app: FastifyInstance, tracing: Tracing): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    const span = tracing.start(`${request.method} ${route ?? 'unmatched'}`, {
      kind: 'server',
      attributes: {
        'http.request.method': request.method,
        'http.route': route,
        'url.scheme': request.protocol,
      },
    });
    spans.set(request, span);
    tracing.within(span.ref, done);
  });
  // Parsing a body runs on the socket's events, outside the context set above: set it again for the rest.
  app.addHook('preValidation', (request, _reply, done) => {
    const span = spans.get(request);
    if (span) tracing.within(span.ref, done);
    else done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      span.setAttributes({ 'http.response.status_code': reply.statusCode });
      if (reply.statusCode >= 500) {
        span.fail(new Error('server error'));
        // As the HTTP conventions have it: the status code is the error's type.
        span.setAttributes({ 'error.type': String(reply.statusCode) });
      }
      span.end();
      spans.delete(request);
    }
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    spans.get(request)?.end();
    spans.delete(request);
    done();
  });
}
