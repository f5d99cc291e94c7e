import { WORKER_HAND_BACK_AFTER_MS } from '../config.ts';

/** A background loop that runs one bounded pass at a fixed interval. */
export interface Worker {
  stop(): Promise<void>;
}

/**
 * What a pass is told when its process stops: `stopping` fires at once (take no further item), `handBack`
 * WORKER_HAND_BACK_AFTER_MS later (give up on items still in flight and release their leases, so another
 * process takes them at once instead of waiting for the lease to run out).
 */
export interface StopSignals {
  stopping: AbortSignal;
  handBack: AbortSignal;
}

/** Signals that fire when stop() is called; stop() resolves once `work` (the items in flight) has settled. */
export function stopSignals(): StopSignals & { stop(work: Promise<unknown>): Promise<void> } {
  const stopping = new AbortController();
  const handBack = new AbortController();
  return {
    stopping: stopping.signal,
    handBack: handBack.signal,
    async stop(work) {
      stopping.abort();
      const timer = setTimeout(() => handBack.abort(), WORKER_HAND_BACK_AFTER_MS);
      try {
        await work;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Runs `tick` every intervalMs, never overlapping itself; errors are reported and the next tick runs. */
export function startPeriodic(
  name: string,
  intervalMs: number,
  tick: (signals: StopSignals) => Promise<unknown>,
  onError: (name: string, error: unknown) => void,
): Worker {
  let running: Promise<unknown> | undefined;
  const signals = stopSignals();
  const timer = setInterval(() => {
    if (running || signals.stopping.aborted) return;
    running = tick(signals)
      .catch((error) => onError(name, error))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await signals.stop(running ?? Promise.resolve());
    },
  };
}

/**
 * Settles with 'handed_back' once `signal` fires (at once if it has), unless `work` settles first. The
 * listener is removed when `work` settles: a long-lived signal would otherwise keep one closure per call.
 */
export function unlessHandedBack<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T | 'handed_back'> {
  if (!signal) return work;
  if (signal.aborted) return Promise.resolve('handed_back');
  return new Promise<T | 'handed_back'>((resolve, reject) => {
    const handedBack = () => resolve('handed_back');
    signal.addEventListener('abort', handedBack, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', handedBack);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', handedBack);
        reject(error);
      },
    );
  });
}
