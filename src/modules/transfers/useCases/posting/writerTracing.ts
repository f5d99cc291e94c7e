/** The ledger writer's batch as a span, when traces are on (src/telemetry/tracing.ts). */
import { activeTracing, type SpanRef } from '../../../../telemetry/tracing.ts';

/**
 * Runs a batch inside its span: the child of its one command's span, or, serving several requests, a span
 * of its own trace linked to each of theirs (it belongs to none of them alone). Without traces, just runs it.
 */
export async function inBatchSpan(
  batch: readonly { trace?: SpanRef | undefined; enqueuedAtMs: number }[],
  cutAtMs: number,
  run: () => Promise<void>,
): Promise<void> {
  const tracing = activeTracing();
  if (!tracing) return run();
  const refs = batch.flatMap((p) => (p.trace ? [p.trace] : []));
  const waitMs = cutAtMs - (batch[0]?.enqueuedAtMs ?? cutAtMs);
  const alone = batch.length === 1 && refs.length === 1;
  const span = tracing.start('ledger writer batch', {
    parent: alone ? refs[0] : null,
    links: alone ? [] : refs,
    attributes: { 'mkoba.ledger.batch.commands': batch.length, 'mkoba.ledger.batch.wait_ms': waitMs },
  });
  try {
    await tracing.within(span.ref, run);
  } finally {
    span.end();
  }
}
