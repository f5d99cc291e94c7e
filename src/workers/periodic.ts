/** A background loop that runs one bounded pass at a fixed interval. */
export interface Worker {
  stop(): Promise<void>;
}

/** Runs `tick` every intervalMs, never overlapping itself; errors are reported and the next tick runs. */
export function startPeriodic(
  name: string,
  intervalMs: number,
  tick: () => Promise<unknown>,
  onError: (name: string, error: unknown) => void,
): Worker {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = tick()
      .catch((error) => onError(name, error))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
