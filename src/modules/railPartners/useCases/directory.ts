/**
 * The rail partners a process talks to: for each stored configuration, the adapter built from it (with its
 * credentials opened), a circuit breaker (opossum) and a token bucket. A partner that errors or times out
 * repeatedly is paused: its calls are refused at once for RAIL_PARTNER_PAUSE_MS, the transfers waiting on
 * it are deferred (nothing is lost), and the pause and the resumption are events and a metric.
 *
 * The state is per process: two worker processes each keep their own breaker and bucket, so the rate a
 * partner sees is at most the bucket's rate times the number of worker processes.
 */
import CircuitBreaker from 'opossum';
import type { Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import type { EventRecord } from '../../../domain/events.ts';
import { outboundPolicyFor } from '../../../domain/outboundAddresses.ts';
import { type BucketState, type TokenBucket, takeTokens, tokensAt } from '../../../domain/rateLimits.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import {
  type PartnerRail,
  type PartnerRailFactories,
  RailPartnerUnavailableError,
  type ResolvedPartnerRail,
} from '../../../rails/partner.ts';
import {
  mobileMoneyCarriers,
  RAIL_PARTNER_SHAPES,
  type RailPartnerConfig,
  railPartnerLookup,
} from '../domain.ts';
import { findActiveRailPartner, findRailPartnerConfig } from '../repository/partners.ts';
import { findTransferRailPartner, pinTransferRailPartner } from '../repository/transferPartners.ts';
import { recordingFetch, withCallSubjects } from './partnerCalls.ts';
import { callbackBaseUrl, openRailPartnerCredentials } from './partners.ts';
import { payoutRequestJournal } from './payoutRequests.ts';

/** How long an open circuit refuses calls before it lets one through to try the partner again. */
export const RAIL_PARTNER_PAUSE_MS = 30_000;
/** Share of failed calls, in percent, over the rolling window that opens the circuit. */
export const RAIL_PARTNER_ERROR_PERCENT_MAX = 50;
/** Calls in the rolling window before the error share counts, so two early failures do not pause a partner. */
export const RAIL_PARTNER_CALLS_BEFORE_PAUSE = 5;
/** The rolling window the error share is measured over. */
export const RAIL_PARTNER_ERROR_WINDOW_MS = 60_000;
/** Calls per second to one partner configuration, per process, and the burst above it. */
export const RAIL_PARTNER_CALLS_PER_SECOND = 20;
export const RAIL_PARTNER_CALLS_BURST = 40;

interface Entry {
  version: number;
  config: RailPartnerConfig;
  adapter: PartnerRail;
  breaker: CircuitBreaker<[() => Promise<unknown>], unknown>;
  bucket: BucketState | undefined;
}

export interface RailPartnerDirectoryOptions {
  pauseMs?: number;
  callsBeforePause?: number;
  bucket?: TokenBucket;
}

export class RailPartnerDirectory {
  private readonly entries = new Map<string, Entry>();
  private readonly bucket: TokenBucket;

  constructor(
    private readonly deps: Deps,
    private readonly factories: PartnerRailFactories,
    private readonly options: RailPartnerDirectoryOptions = {},
  ) {
    this.bucket = options.bucket ?? {
      capacity: RAIL_PARTNER_CALLS_BURST,
      refillPerSecond: RAIL_PARTNER_CALLS_PER_SECOND,
    };
  }

  /** The adapter for a configuration, rebuilt when the configuration changed since. */
  adapterFor(config: RailPartnerConfig): PartnerRail {
    return this.entryFor(config).adapter;
  }

  /**
   * The partner that carries the payout. The first time, the organization's active partner for its rail and
   * network (undefined when none is), pinned to the transfer in its own statement before anything is sent;
   * from then on always that one, active or not, so a payout it may have accepted is asked about, retried
   * and reversed there even after another partner is configured for the network or this one is disabled.
   */
  async forTransfer(transfer: Transfer): Promise<ResolvedPartnerRail | undefined> {
    const config = await this.carrierOf(transfer);
    return config && this.guarded(config);
  }

  /** The configuration pinned to carry the transfer, pinning the active one the first time. */
  async carrierOf(transfer: Transfer): Promise<RailPartnerConfig | undefined> {
    const store = this.deps.store;
    const pinnedId = await findTransferRailPartner(store, transfer.id);
    const current =
      pinnedId === undefined
        ? await this.configFor(transfer.organizationId, transfer.rail, transfer.network)
        : undefined;
    if (pinnedId === undefined && current === undefined) return undefined;
    const carrierId =
      pinnedId ??
      (await pinTransferRailPartner(store, {
        transferId: transfer.id,
        organizationId: transfer.organizationId,
        configId: (current as RailPartnerConfig).id,
        at: this.deps.now(),
      }));
    if (current?.id === carrierId) return current;
    return findRailPartnerConfig(store, transfer.organizationId, carrierId);
  }

  /**
   * The organization's active partner for a rail and network, guarded, or undefined. A rail another
   * partner also carries (paybill, till: M-Pesa's) is found under that partner's rail and network.
   */
  async forRail(
    organizationId: string,
    rail: Transfer['rail'],
    network: string | null,
  ): Promise<ResolvedPartnerRail | undefined> {
    const config = await this.configFor(organizationId, rail, network);
    return config && this.guarded(config);
  }

  /**
   * The configuration that carries a rail and network. Mobile money: the network's own partner (M-Pesa,
   * MoMo) when the organization has one active, else a partner on another rail that declares the network
   * (Flutterwave's mobile-money transfers), in mobileMoneyCarriers' order.
   */
  private async configFor(
    organizationId: string,
    rail: Transfer['rail'],
    network: string | null,
  ): Promise<RailPartnerConfig | undefined> {
    const lookup = railPartnerLookup(rail, network);
    const store = this.deps.store;
    const config = await findActiveRailPartner(store, organizationId, lookup.rail, lookup.network);
    if (config || rail !== 'mobile_money' || network === null) return config;
    for (const partner of mobileMoneyCarriers(network)) {
      const shape = RAIL_PARTNER_SHAPES[partner];
      const found = await findActiveRailPartner(store, organizationId, shape.rail, shape.network);
      if (found?.partner === partner) return found;
    }
    return undefined;
  }

  guarded(config: RailPartnerConfig): ResolvedPartnerRail {
    const entry = this.entryFor(config);
    return { adapter: entry.adapter, call: (work) => this.call(entry, work) };
  }

  /** Whether the configuration's circuit is open in this process. */
  isPaused(configId: string): boolean {
    return this.entries.get(configId)?.breaker.opened ?? false;
  }

  close(): void {
    for (const entry of this.entries.values()) entry.breaker.shutdown();
    this.entries.clear();
  }

  private async call<T>(entry: Entry, work: () => Promise<T>): Promise<T> {
    const metrics = this.deps.metrics;
    const partner = entry.config.partner;
    if (entry.breaker.opened) {
      metrics?.observeRailPartnerCall(partner, 'paused');
      throw new RailPartnerUnavailableError('rail_paused', this.options.pauseMs ?? RAIL_PARTNER_PAUSE_MS);
    }
    const nowMs = this.deps.now().getTime();
    const taken = takeTokens([this.bucket], [entry.bucket], nowMs, 1);
    entry.bucket = { tokens: taken.tokens[0] ?? 0, updatedAtMs: nowMs };
    if (!taken.allowed) {
      metrics?.observeRailPartnerCall(partner, 'rate_limited');
      const missing = 1 - tokensAt(this.bucket, entry.bucket, nowMs);
      throw new RailPartnerUnavailableError(
        'rail_rate_limited',
        Math.ceil((missing * 1000) / this.bucket.refillPerSecond),
      );
    }
    try {
      const result = (await entry.breaker.fire(work)) as T;
      metrics?.observeRailPartnerCall(partner, 'ok');
      return result;
    } catch (error) {
      if ((error as { code?: string }).code === 'EOPENBREAKER') {
        metrics?.observeRailPartnerCall(partner, 'paused');
        throw new RailPartnerUnavailableError('rail_paused', this.options.pauseMs ?? RAIL_PARTNER_PAUSE_MS);
      }
      metrics?.observeRailPartnerCall(partner, 'error');
      throw error;
    }
  }

  private entryFor(config: RailPartnerConfig): Entry {
    const version = config.updatedAt.getTime();
    const existing = this.entries.get(config.id);
    if (existing && existing.version === version) return existing;
    existing?.breaker.shutdown();
    const base = callbackBaseUrl(this.deps, config);
    // Without a public URL the partner could not call back: refuse to call it at all (the call is retried).
    if (base === null)
      throw new Error('MKOBA_PUBLIC_URL is not set: a rail partner cannot be told where to call back');
    const factory = this.factories[config.partner];
    if (!factory) throw new Error(`this process has no adapter for rail partner ${config.partner}`);
    // Every request the adapter sends is recorded (rail_partner_calls), with what its method was asked about.
    const adapter = withCallSubjects(
      factory(
        {
          settings: config.settings,
          credentials: openRailPartnerCredentials(this.deps, config),
          addressPolicy: outboundPolicyFor(this.deps.environment),
          payoutRequests: payoutRequestJournal(this.deps, config),
          recordCalls: (fetch) => recordingFetch(this.deps, config, fetch),
        },
        { baseUrl: base },
      ),
    );
    const breaker = new CircuitBreaker(async (work: () => Promise<unknown>) => work(), {
      // The rail worker bounds each call's time itself; the breaker only counts outcomes.
      timeout: false,
      resetTimeout: this.options.pauseMs ?? RAIL_PARTNER_PAUSE_MS,
      errorThresholdPercentage: RAIL_PARTNER_ERROR_PERCENT_MAX,
      volumeThreshold: this.options.callsBeforePause ?? RAIL_PARTNER_CALLS_BEFORE_PAUSE,
      rollingCountTimeout: RAIL_PARTNER_ERROR_WINDOW_MS,
      name: config.id,
    });
    const entry: Entry = { version, config, adapter, breaker, bucket: existing?.bucket };
    breaker.on('open', () => this.announce(entry, true));
    breaker.on('close', () => this.announce(entry, false));
    this.entries.set(config.id, entry);
    return entry;
  }

  /** The pause or resumption as an event for the organization (best effort: the metric always moves). */
  private announce(entry: Entry, paused: boolean): void {
    const { config } = entry;
    this.deps.metrics?.setRailPartnerPaused(config.partner, config.id, paused);
    const event: EventRecord = newEvent(
      this.deps,
      {
        organizationId: config.organizationId,
        type: paused ? 'rail_partner.paused' : 'rail_partner.resumed',
        resourceId: config.id,
        data: {
          rail_partner_id: config.id,
          partner: config.partner,
          rail: config.rail,
          network: config.network,
          ...(paused ? { paused_for_ms: this.options.pauseMs ?? RAIL_PARTNER_PAUSE_MS } : {}),
        },
      },
      this.deps.now(),
    );
    this.deps.store
      .transaction((tx) => recordEvents(tx, this.deps, [event]))
      .catch((error: unknown) => {
        process.stderr.write(
          `${JSON.stringify({ level: 'error', msg: 'could not record a rail partner pause event', rail_partner: config.id, error: String(error) })}\n`,
        );
      });
  }
}

const directories = new WeakMap<Deps, RailPartnerDirectory>();

/** The process's directory for these deps: one per Deps, so every route and worker shares its breakers. */
export function railPartnerDirectory(deps: Deps): RailPartnerDirectory {
  let directory = directories.get(deps);
  if (!directory) {
    if (!deps.railPartnerFactories) throw new Error('no rail partner adapters were given to this process');
    directory = new RailPartnerDirectory(deps, deps.railPartnerFactories);
    directories.set(deps, directory);
  }
  return directory;
}

/** Stops the directory's breakers (a process or test shutting down). */
export function closeRailPartnerDirectory(deps: Deps): void {
  directories.get(deps)?.close();
  directories.delete(deps);
}
