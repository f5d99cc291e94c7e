/**
 * The OpenTelemetry SDK behind `Tracing`: loaded (by a dynamic import) only when OTEL_EXPORTER_OTLP_ENDPOINT
 * or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. Spans are batched and sent over OTLP/HTTP (JSON); the SDK reads
 * its standard variables itself (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_TRACES_SAMPLER and its argument, OTEL_BSP_*, OTEL_SPAN_*_LIMIT). Its
 * packages are imported when tracing starts, not with this module: bin/compiledSources.js puts a module's
 * static imports of packages at the top of the one compiled file, which would load the SDK in every process.
 */
import type { Context, Link, Span, SpanKind } from '@opentelemetry/api';
import type { SpanHandle, SpanKindName, SpanOptions, SpanRef, Tracing } from './tracing.ts';

type Api = typeof import('@opentelemetry/api');

/** The service's name in traces unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names another. */
export const TRACE_SERVICE_NAME_DEFAULT = 'mkoba';
/** Links one span may carry: a ledger writer batch links every request it serves (at most 200). */
const SPAN_LINKS_MAX = 200;

const kindsOf = (api: Api): Record<SpanKindName, SpanKind> => ({
  server: api.SpanKind.SERVER,
  client: api.SpanKind.CLIENT,
  internal: api.SpanKind.INTERNAL,
});

interface OtelRef extends SpanRef {
  readonly context: Context;
}

/** Starts the SDK with an OTLP/HTTP exporter configured by the environment. */
export async function startOtelTracing(): Promise<Tracing> {
  const [api, { OTLPTraceExporter }, resources, { BatchSpanProcessor }, { NodeTracerProvider }] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/sdk-trace-node'),
    ]);
  const { defaultResource, detectResources, envDetector, resourceFromAttributes } = resources;
  const { context, trace } = api;
  const kinds = kindsOf(api);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': TRACE_SERVICE_NAME_DEFAULT }))
    .merge(detectResources({ detectors: [envDetector] }));
  const linkLimit = Number(process.env.OTEL_SPAN_LINK_COUNT_LIMIT) || SPAN_LINKS_MAX;
  const provider = new NodeTracerProvider({
    resource,
    spanLimits: { linkCountLimit: linkLimit },
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // Sets the AsyncLocalStorage context manager: a span started in a request is the parent of what it awaits.
  provider.register();
  const tracer = provider.getTracer('mkoba');
  return {
    start(name, options = {}) {
      const parent = parentContext(api, options.parent);
      const links: Link[] = (options.links ?? []).flatMap((ref) => {
        const linked = trace.getSpanContext((ref as OtelRef).context);
        return linked ? [{ context: linked }] : [];
      });
      const span = tracer.startSpan(
        name,
        { kind: kinds[options.kind ?? 'internal'], attributes: clean(options.attributes), links },
        parent,
      );
      return handleOf(api, span, parent);
    },
    within: (ref, fn) => context.with((ref as OtelRef).context, fn),
    current() {
      const active = context.active();
      return trace.getSpan(active) ? refOf(active) : undefined;
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

function parentContext({ context, trace }: Api, parent: SpanRef | null | undefined): Context {
  if (parent === null) return trace.deleteSpan(context.active());
  return parent === undefined ? context.active() : (parent as OtelRef).context;
}

function refOf(ctx: Context): OtelRef {
  return { spanRef: true, context: ctx };
}

function handleOf({ trace, SpanStatusCode }: Api, span: Span, parent: Context): SpanHandle {
  return {
    ref: refOf(trace.setSpan(parent, span)),
    setAttributes: (attributes) => span.setAttributes(clean(attributes)),
    fail(error) {
      // The class alone: an error's message may quote input (a name, a phone number, a statement's value).
      const kind = error instanceof Error ? error.name : typeof error;
      span.setStatus({ code: SpanStatusCode.ERROR, message: kind });
      span.setAttribute('error.type', kind);
    },
    end: () => span.end(),
  };
}

function clean(attributes: SpanOptions['attributes']): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes ?? {})) if (value !== undefined) out[key] = value;
  return out;
}
