/**
 * Traces for a `mkoba serve` or `mkoba worker` process: on when the standard OTEL_EXPORTER_OTLP_ENDPOINT
 * (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, off otherwise, in which case the SDK is never loaded
 * and every traced place runs as if there were no traces.
 */
import { useTracing } from './tracing.ts';

/** Whether the environment asks for traces: an OTLP endpoint for them, and the SDK not switched off. */
export function tracesRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** Starts traces if asked for; resolves to what stops them (sending what is buffered). */
export async function startProcessTracing(env: NodeJS.ProcessEnv): Promise<() => Promise<void>> {
  if (!tracesRequested(env)) return async () => {};
  const { startOtelTracing } = await import('./otel.ts');
  const tracing = await startOtelTracing();
  useTracing(tracing);
  return async () => {
    useTracing(undefined);
    await tracing.shutdown();
  };
}
