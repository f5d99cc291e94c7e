/**
 * Traces, as the rest of the code sees them: one process-wide slot that holds a `Tracing` once
 * OTEL_EXPORTER_OTLP_ENDPOINT turned it on (src/telemetry/otel.ts, loaded only then), and nothing
 * otherwise. Every traced place asks `activeTracing()` and, finding none, runs its work as it would
 * without traces: no SDK is loaded, no span object is made. Attributes are chosen where a span is made,
 * and never carry a key, a token, a body or a person's data (test/tracing.test.ts looks for them).
 */

/** Values a span attribute may take. */
export type SpanAttributeValue = string | number | boolean;
export type SpanAttributes = Record<string, SpanAttributeValue | undefined>;

/** Where a span stands in a trace, kept to parent or link a later span to it. Opaque outside otel.ts. */
export interface SpanRef {
  readonly spanRef: true;
}

export type SpanKindName = 'server' | 'client' | 'internal';

export interface SpanOptions {
  kind?: SpanKindName;
  attributes?: SpanAttributes;
  /** The span's parent; default the active span. `null`: a span of its own trace. */
  parent?: SpanRef | null;
  /** Spans this one relates to without being their child (a writer batch serving many requests). */
  links?: readonly SpanRef[];
}

/** A span being recorded. */
export interface SpanHandle {
  readonly ref: SpanRef;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed with the error's class name only: a message may carry input. */
  fail(error: unknown): void;
  end(): void;
}

export interface Tracing {
  start(name: string, options?: SpanOptions): SpanHandle;
  /** Runs fn with `ref` as the active span: spans fn starts (through any await) are its children. */
  within<T>(ref: SpanRef, fn: () => T): T;
  /** The active span, if any. */
  current(): SpanRef | undefined;
  /** Sends what is buffered now. */
  flush(): Promise<void>;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/** The process's tracing, or undefined when traces are off. */
export function activeTracing(): Tracing | undefined {
  return active;
}

/** Installs (or, with undefined, removes) the process's tracing. */
export function useTracing(tracing: Tracing | undefined): void {
  active = tracing;
}

/**
 * Runs fn inside a span named `name`, child of the active one, ending it when fn settles (failed if fn
 * throws). Without tracing, fn alone: no span, not even another promise around it.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: SpanHandle | undefined) => Promise<T>,
): Promise<T> {
  const tracing = active;
  return tracing ? runInSpan(tracing, name, options, fn) : fn(undefined);
}

async function runInSpan<T>(
  tracing: Tracing,
  name: string,
  options: SpanOptions,
  fn: (span: SpanHandle | undefined) => Promise<T>,
): Promise<T> {
  const span = tracing.start(name, options);
  try {
    return await tracing.within(span.ref, () => fn(span));
  } catch (error) {
    span.fail(error);
    throw error;
  } finally {
    span.end();
  }
}
