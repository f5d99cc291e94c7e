/**
 * Controls several simulators give their tests over the same kind of state: forcing the next requests to
 * fail, slowing every answer, waiting for records (webhooks, callbacks) or for scheduled work to finish,
 * and closing.
 */
import type http from 'node:http';
import { closeSimulator, type SimulatorWork, waitFor } from './shared.ts';

/** A simulator's state as its common controls see it: scheduled work, forced failures, latency. */
interface ControlledState<S extends number> extends SimulatorWork {
  failures: S[];
  config: { latencyMs?: number };
}

/** The controls a simulator with scheduled work offers its tests, whatever partner it plays. */
export interface SimulatorWorkControls<S extends number> {
  /** The next `count` requests, whatever they are, are answered `status` with the partner's error body. */
  failNext(count: number, status: S): void;
  /** Every request waits `ms` before it is answered, as a slow API would (0: at once). */
  setLatency(ms: number): void;
  /** Resolves once no scheduled work is left (each record's final status reached, each delivery answered). */
  whenIdle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The controls of a simulator with scheduled work; `idleWhat` names the work in whenIdle's time-out message. */
export function workControls<S extends number>(
  state: ControlledState<S>,
  server: http.Server,
  waitTimeoutMs: number,
  idleWhat = 'scheduled work',
): SimulatorWorkControls<S> {
  return {
    failNext: (count: number, status: S) => {
      for (let i = 0; i < count; i += 1) state.failures.push(status);
    },
    setLatency: (ms: number) => {
      state.config.latencyMs = ms;
    },
    whenIdle: async (timeoutMs = waitTimeoutMs) => {
      await waitFor(state, () => (state.busy === 0 ? true : undefined), timeoutMs, idleWhat);
    },
    close: () => closeSimulator(state, server),
  };
}

/** Resolves with the records `matches` accepts once there are at least `count` of them. */
export function waitForRecords<T>(
  work: Pick<SimulatorWork, 'listeners'>,
  records: readonly T[],
  matches: (record: T) => boolean,
  count: number,
  timeoutMs: number,
  what: string,
): Promise<T[]> {
  return waitFor(
    work,
    () => {
      const found = records.filter(matches);
      return found.length >= count ? found : undefined;
    },
    timeoutMs,
    what,
  );
}
