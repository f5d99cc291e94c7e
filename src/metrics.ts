/**
 * The service's Prometheus registry: what the use cases, workers and HTTP edge observe (writer batches,
 * webhook outcomes, idempotency conflicts, event stream publishes), figures read from the database at
 * scrape time (open transfers, webhook backlog, event stream lag, pool use), and Node's process metrics.
 * One per process (src/app/deps.ts systemDeps); the HTTP metrics of src/http/metrics.ts register in the
 * same registry. docs/OPERATIONS.md lists them all.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, type LabelValues, Registry } from 'prom-client';
import {
  oldestUnpublishedEventAt,
  openTransferCounts,
  subscriptionQueues,
} from './store/repositories/operations.ts';
import type { Store } from './store/store.ts';

/** Subscriptions labelled in mkoba_webhook_queue_depth: the deepest ones, so the series stay few. */
export const QUEUE_DEPTH_SUBSCRIPTIONS_MAX = 20;
/** Pending deliveries counted per subscription at a scrape; a deeper queue reads as this many. */
export const QUEUE_DEPTH_COUNT_MAX = 10_000;

export const WRITER_BATCH_COMMANDS_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200];
export const WRITER_WAIT_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export type WebhookDeliveryOutcome = 'succeeded' | 'retrying' | 'exhausted';
export type IdempotencyConflictCode = 'idempotency_key_in_flight' | 'idempotency_key_reused';

export interface ServiceMetrics {
  registry: Registry;
  /** One ledger-writer batch: its commands, and how long its oldest command waited in the queue. */
  observeWriterBatch(commands: number, waitMs: number): void;
  /** One recorded webhook attempt's effect on its delivery. */
  observeWebhookDelivery(outcome: WebhookDeliveryOutcome): void;
  observeIdempotencyConflict(code: IdempotencyConflictCode): void;
  /** One call to a rail partner (submit, check, collect) and how it ended. */
  observeRailPartnerCall(partner: string, outcome: RailPartnerCallOutcome): void;
  /** A partner configuration's circuit opened (paused) or closed again. */
  setRailPartnerPaused(partner: string, configId: string, paused: boolean): void;
  /** One partner callback stored, by what applying it made of it. */
  observeRailCallback(partner: string, status: string): void;
  /** One event sent to the event stream, by what JetStream made of it. */
  observeEventStreamPublish(outcome: EventStreamPublishOutcome): void;
}

/** `stored`: acknowledged as new; `duplicate`: acknowledged as one the stream had (same Nats-Msg-Id); `failed`: no acknowledgement. */
export type EventStreamPublishOutcome = 'stored' | 'duplicate' | 'failed';

/** `ok`: the partner answered; `error`: it threw or timed out; `paused`: the circuit refused the call; `rate_limited`: no token. */
export type RailPartnerCallOutcome = 'ok' | 'error' | 'paused' | 'rate_limited';

export interface ServiceMetricsOptions {
  /**
   * Label series with subscription and rail partner ids (MKOBA_METRICS_RESOURCE_LABELS=1). Off by default:
   * one page would otherwise list ids of every organization.
   */
  resourceLabels?: boolean;
  /** The event stream published to (MKOBA_EVENT_STREAM_NAME), when one is configured: its lag is a gauge. */
  eventStream?: string | undefined;
}

export function createServiceMetrics(
  store: Store,
  now: () => Date = () => new Date(),
  options: ServiceMetricsOptions = {},
): ServiceMetrics {
  const resourceLabels = options.resourceLabels ?? false;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Registered in this order, which is the order a scrape lists them in.
  const writer = ledgerWriterMetrics(registry);
  const outcomes = requestOutcomeMetrics(registry);
  const guarded = scrapeGuard(registry);
  const railPartners = railPartnerMetrics(registry, resourceLabels);
  const eventStream = eventStreamMetrics(registry);
  registerTransferGauges(registry, store, guarded);
  registerWebhookQueueGauges(registry, store, now, resourceLabels, guarded);
  if (options.eventStream) registerEventStreamLag(registry, store, now, options.eventStream, guarded);
  if (store.stats) registerPoolGauges(registry, store.stats.bind(store));
  return { registry, ...writer, ...outcomes, ...railPartners, ...eventStream };
}

function ledgerWriterMetrics(registry: Registry): Pick<ServiceMetrics, 'observeWriterBatch'> {
  const writerBatch = new Histogram({
    name: 'mkoba_ledger_writer_batch_commands',
    help: 'Transfer commands per ledger-writer batch (one transaction each).',
    buckets: WRITER_BATCH_COMMANDS_BUCKETS,
    registers: [registry],
  });
  const writerWait = new Histogram({
    name: 'mkoba_ledger_writer_wait_seconds',
    help: "Time a batch's oldest command waited in the ledger writer's queue before its transaction began.",
    buckets: WRITER_WAIT_BUCKETS_SECONDS,
    registers: [registry],
  });
  return {
    observeWriterBatch(commands, waitMs) {
      writerBatch.observe(commands);
      writerWait.observe(waitMs / 1000);
    },
  };
}

/** A counter by one label of known values, each started at zero so a rate is defined before the first event. */
function counterFromZero<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  label: L,
  values: readonly string[],
): Counter<L> {
  const counter = new Counter({ name, help, labelNames: [label], registers: [registry] });
  for (const value of values) counter.inc({ [label]: value } as LabelValues<L>, 0);
  return counter;
}

/** What became of webhook attempts and of requests refused over their Idempotency-Key. */
function requestOutcomeMetrics(
  registry: Registry,
): Pick<ServiceMetrics, 'observeWebhookDelivery' | 'observeIdempotencyConflict'> {
  const deliveries = counterFromZero(
    registry,
    'mkoba_webhook_deliveries_total',
    'Webhook attempts recorded, by what they made of the delivery: succeeded, retrying or exhausted.',
    'outcome',
    ['succeeded', 'retrying', 'exhausted'],
  );
  const conflicts = counterFromZero(
    registry,
    'mkoba_idempotency_conflicts_total',
    'Requests refused over their Idempotency-Key: in flight (409) or reused with another request (422).',
    'code',
    ['idempotency_key_in_flight', 'idempotency_key_reused'],
  );
  return {
    observeWebhookDelivery(outcome) {
      deliveries.inc({ outcome });
    },
    observeIdempotencyConflict(code) {
      conflicts.inc({ code });
    },
  };
}

/** Sets a gauge from a scrape-time read; a read that fails leaves the gauge out and is counted. */
type ScrapeGuard = (name: string, gauge: Gauge, read: () => Promise<void>) => Promise<void>;

function scrapeGuard(registry: Registry): ScrapeGuard {
  const collectFailures = new Counter({
    name: 'mkoba_metrics_collect_failures_total',
    help: 'Scrape-time database reads that failed; their gauges are left out of that scrape.',
    labelNames: ['gauge'] as const,
    registers: [registry],
  });
  return async (name, gauge, read) => {
    gauge.reset();
    try {
      await read();
    } catch {
      collectFailures.inc({ gauge: name });
    }
  };
}

function railPartnerMetrics(
  registry: Registry,
  resourceLabels: boolean,
): Pick<ServiceMetrics, 'observeRailPartnerCall' | 'setRailPartnerPaused' | 'observeRailCallback'> {
  const railCalls = new Counter({
    name: 'mkoba_rail_partner_calls_total',
    help: 'Calls to rail partners by partner and outcome: ok, error (threw or timed out), paused (circuit open), rate_limited.',
    labelNames: ['partner', 'outcome'] as const,
    registers: [registry],
  });
  const railPaused = new Gauge<string>({
    name: 'mkoba_rail_partner_paused',
    help: resourceLabels
      ? "1 while a partner configuration's circuit is open in this process (calls refused), 0 once it closes."
      : 'Partner configurations whose circuit is open in this process (calls refused), by partner.',
    labelNames: resourceLabels ? ['partner', 'rail_partner'] : ['partner'],
    registers: [registry],
  });
  /** Without resource labels: the configurations paused now, per partner, counted. */
  const pausedConfigs = new Map<string, Set<string>>();
  const railCallbacks = new Counter({
    name: 'mkoba_rail_callbacks_total',
    help: 'Partner callbacks stored, by partner and by what applying them made of them.',
    labelNames: ['partner', 'status'] as const,
    registers: [registry],
  });
  return {
    observeRailPartnerCall(partner, outcome) {
      railCalls.inc({ partner, outcome });
    },
    setRailPartnerPaused(partner, configId, paused) {
      if (resourceLabels) {
        railPaused.set({ partner, rail_partner: configId }, paused ? 1 : 0);
        return;
      }
      const ids = pausedConfigs.get(partner) ?? new Set<string>();
      if (paused) ids.add(configId);
      else ids.delete(configId);
      pausedConfigs.set(partner, ids);
      railPaused.set({ partner }, ids.size);
    },
    observeRailCallback(partner, status) {
      railCallbacks.inc({ partner, status });
    },
  };
}

function eventStreamMetrics(registry: Registry): Pick<ServiceMetrics, 'observeEventStreamPublish'> {
  const publishes = counterFromZero(
    registry,
    'mkoba_event_stream_publishes_total',
    'Events sent to the event stream by this process: stored, duplicate (the stream had it) or failed.',
    'outcome',
    ['stored', 'duplicate', 'failed'],
  );
  return {
    observeEventStreamPublish(outcome) {
      publishes.inc({ outcome });
    },
  };
}

function registerEventStreamLag(
  registry: Registry,
  store: Store,
  now: () => Date,
  stream: string,
  guarded: ScrapeGuard,
): void {
  new Gauge({
    name: 'mkoba_event_stream_lag_seconds',
    help: 'Age of the oldest event not yet acknowledged by the event stream (0 when none is waiting).',
    registers: [registry],
    async collect() {
      await guarded('mkoba_event_stream_lag_seconds', this, async () => {
        const oldest = await oldestUnpublishedEventAt(store, stream);
        this.set(oldest ? Math.max(0, (now().getTime() - oldest.getTime()) / 1000) : 0);
      });
    },
  });
}

function registerTransferGauges(registry: Registry, store: Store, guarded: ScrapeGuard): void {
  new Gauge({
    name: 'mkoba_transfers_open',
    help: 'Transfers not yet final (pending_approval, in_review, pending, processing), by status and rail.',
    labelNames: ['status', 'rail'] as const,
    registers: [registry],
    async collect() {
      await guarded('mkoba_transfers_open', this, async () => {
        for (const row of await openTransferCounts(store)) {
          this.set({ status: row.status, rail: row.rail }, row.count);
        }
      });
    },
  });
}

function registerWebhookQueueGauges(
  registry: Registry,
  store: Store,
  now: () => Date,
  resourceLabels: boolean,
  guarded: ScrapeGuard,
): void {
  // The registry collects every metric of a scrape at once: the three webhook gauges share one read.
  let queueRead: ReturnType<typeof subscriptionQueues> | undefined;
  function queues(): ReturnType<typeof subscriptionQueues> {
    queueRead ??= subscriptionQueues(store, now(), QUEUE_DEPTH_COUNT_MAX).finally(() => {
      queueRead = undefined;
    });
    return queueRead;
  }
  new Gauge<string>({
    name: 'mkoba_webhook_queue_depth',
    help: resourceLabels
      ? `Pending deliveries of the ${QUEUE_DEPTH_SUBSCRIPTIONS_MAX} deepest subscription queues, by subscription (each counted up to ${QUEUE_DEPTH_COUNT_MAX}).`
      : `Pending deliveries of the deepest subscription queue (counted up to ${QUEUE_DEPTH_COUNT_MAX}).`,
    labelNames: resourceLabels ? ['subscription_id'] : [],
    registers: [registry],
    async collect() {
      await guarded('mkoba_webhook_queue_depth', this, async () => {
        const deepest = [...(await queues())].sort((a, b) => b.depth - a.depth);
        if (!resourceLabels) {
          this.set(deepest[0]?.depth ?? 0);
          return;
        }
        for (const q of deepest.slice(0, QUEUE_DEPTH_SUBSCRIPTIONS_MAX)) {
          this.set({ subscription_id: q.subscriptionId }, q.depth);
        }
      });
    },
  });
  new Gauge({
    name: 'mkoba_webhook_backlog_deliveries',
    help: `Pending deliveries over all subscriptions (each subscription counted up to ${QUEUE_DEPTH_COUNT_MAX}).`,
    registers: [registry],
    async collect() {
      await guarded('mkoba_webhook_backlog_deliveries', this, async () => {
        this.set((await queues()).reduce((sum, q) => sum + q.depth, 0));
      });
    },
  });
  new Gauge({
    name: 'mkoba_webhook_backlog_age_seconds',
    help: 'How long the oldest due pending delivery has been due (0 when none is): how far dispatch lags.',
    registers: [registry],
    async collect() {
      await guarded('mkoba_webhook_backlog_age_seconds', this, async () => {
        const due = (await queues()).flatMap((q) => (q.oldestDueAt ? [q.oldestDueAt.getTime()] : []));
        const oldest = due.length > 0 ? Math.min(...due) : undefined;
        this.set(oldest === undefined ? 0 : Math.max(0, (now().getTime() - oldest) / 1000));
      });
    },
  });
}

/** The database pool's connections, on a store that has a pool (PostgreSQL). */
function registerPoolGauges(registry: Registry, stats: NonNullable<Store['stats']>): void {
  new Gauge({
    name: 'mkoba_db_pool_connections',
    help: 'Database pool connections by state: open (total), idle, and the pool maximum (max).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const s = stats();
      this.set({ state: 'total' }, s.totalCount);
      this.set({ state: 'idle' }, s.idleCount);
      this.set({ state: 'max' }, s.maxCount);
    },
  });
  new Gauge({
    name: 'mkoba_db_pool_waiting_requests',
    help: 'Queries and transactions waiting for a pool connection: above 0, the pool is saturated.',
    registers: [registry],
    collect() {
      this.set(stats().waitingCount);
    },
  });
}
