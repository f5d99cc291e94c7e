/**
 * The export worker's schedule. Each pass deletes expired files and runs the next queued export to its end
 * (any number of processes may run it: jobs are leased, and a dead worker's job is taken over).
 */
/** How often the worker looks for a queued export. */
export const EXPORT_WORKER_INTERVAL_MS = 1_000;
