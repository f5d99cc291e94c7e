/**
 * Send slots: a dispatcher holds several rounds of a subscription's deliveries and sends them at most
 * `perSubscription` at once (and `processMax` at once in all), in the order claimed; subscriptions waiting
 * for a process slot take turns. Where each held delivery stands (with its subscription's secrets live then)
 * is read once for its claim and read again
 * just before its send when that read is older than WEBHOOK_HELD_STATE_MAX_AGE_MS or the subscription's
 * last attempt failed (it may have been disabled by that failure), so a queue never sends on a stale read.
 */
import type { Queryable } from '../../../store/store.ts';
import type { ClaimedDelivery } from '../repository/claims.ts';
import { type DeliveryToSend, findDeliveriesToSend } from '../repository/deliveries.ts';

/** A held delivery's state older than this is read again before it is sent. */
export const WEBHOOK_HELD_STATE_MAX_AGE_MS = 100;

/** Wait before reading a delivery's state again when the read failed. */
const STATE_READ_RETRY_DELAY_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface SendSlotsOptions {
  store: Queryable;
  /** The clock the secrets' expiry and the leases are read against. */
  now: () => Date;
  /** Sends one subscription has at once, and the process. */
  perSubscription: number;
  processMax: number;
  /**
   * The dispatcher's lease owner and a lease's length: a delivery read again before its send (it waited) has
   * its lease renewed to at least that long from then. Absent for a one-pass dispatcher, which keeps no queue.
   */
  lease?: { owner: string; ms: number };
  onError: (error: unknown) => void;
}

/** One read of held deliveries' states, and when it was asked for (performance.now()). */
interface StateRead {
  at: number;
  states: Promise<Map<string, DeliveryToSend>>;
}

/** A subscription's sends in this dispatcher. */
interface Lane {
  active: number;
  /** The deliveries in its slots now. */
  sending: Set<string>;
  waiting: Waiter[];
  /** In the turn of lanes waiting for a process slot. */
  inTurn: boolean;
  /** When its last failed attempt finished (performance.now()): reads asked for before it are stale. */
  failedAt: number;
}

interface Waiter {
  delivery: ClaimedDelivery;
  grant: (slot: SendSlot | undefined) => void;
}

/** A slot to send one delivery in: where it stands now, and the slot given back once the send is over. */
export interface SendSlot {
  /** The delivery as it stands now; undefined when it is gone. A failed read throws. */
  current(): Promise<DeliveryToSend | undefined>;
  /** Ends the send: `failed` when the endpoint's answer (or its absence) was a failure. */
  free(failed: boolean): void;
}

export class SendSlots {
  private readonly lanes = new Map<string, Lane>();
  /** Lanes with a waiter and a free lane slot, waiting for a process slot, in turn. */
  private readonly turn: Lane[] = [];
  private readonly reads = new Map<string, StateRead>();
  private active = 0;
  private closed = false;

  private readonly perSubscription: number;
  private readonly processMax: number;

  constructor(private readonly options: SendSlotsOptions) {
    this.perSubscription = options.perSubscription;
    this.processMax = options.processMax;
  }

  /**
   * Takes in what a claim leased, with one read of their states for all. The read is tried twice: a read
   * that fails counts a failed attempt against every delivery that needed it.
   */
  hold(claimed: readonly ClaimedDelivery[]): void {
    if (claimed.length === 0) return;
    const read = this.read(
      claimed.map((d) => d.id),
      false,
    );
    for (const delivery of claimed) this.reads.set(delivery.id, read);
  }

  /** Deliveries of a subscription held and not yet sending. */
  queued(subscriptionId: string): number {
    return this.lanes.get(subscriptionId)?.waiting.length ?? 0;
  }

  /**
   * Waits for a slot to send `delivery` in, in claim order. Once the dispatcher is stopping, only a slot free
   * at once is given, and otherwise undefined: the delivery is to be given back.
   */
  take(delivery: ClaimedDelivery): Promise<SendSlot | undefined> {
    let lane = this.lanes.get(delivery.subscriptionId);
    if (!lane) {
      lane = { active: 0, sending: new Set(), waiting: [], inTurn: false, failedAt: -Infinity };
      this.lanes.set(delivery.subscriptionId, lane);
    }
    if (this.closed) {
      if (lane.active >= this.perSubscription || this.active >= this.processMax) {
        if (lane.active === 0) this.lanes.delete(delivery.subscriptionId);
        return Promise.resolve(undefined);
      }
      lane.active++;
      this.active++;
      return Promise.resolve(this.slotFor(lane, delivery));
    }
    const taken = new Promise<SendSlot | undefined>((grant) => {
      (lane as Lane).waiting.push({ delivery, grant });
    });
    this.enterTurn(lane);
    this.grantFree();
    return taken;
  }

  /** Every delivery waiting for a slot gets none: the dispatcher is stopping and gives them back. */
  close(): void {
    this.closed = true;
    this.turn.length = 0;
    for (const lane of this.lanes.values()) {
      for (const waiter of lane.waiting.splice(0)) {
        this.reads.delete(waiter.delivery.id);
        waiter.grant(undefined);
      }
    }
  }

  /** Forgets a delivery that never got a slot (it was given back). */
  forget(deliveryId: string): void {
    this.reads.delete(deliveryId);
  }

  private enterTurn(lane: Lane): void {
    if (!lane.inTurn && lane.waiting.length > 0 && lane.active < this.perSubscription) {
      lane.inTurn = true;
      this.turn.push(lane);
    }
  }

  private grantFree(): void {
    while (this.active < this.processMax && this.turn.length > 0) {
      const lane = this.turn.shift() as Lane;
      lane.inTurn = false;
      const waiter = lane.waiting.shift();
      if (!waiter) continue;
      lane.active++;
      this.active++;
      waiter.grant(this.slotFor(lane, waiter.delivery));
      this.enterTurn(lane);
    }
  }

  private slotFor(lane: Lane, delivery: ClaimedDelivery): SendSlot {
    let freed = false;
    lane.sending.add(delivery.id);
    return {
      current: async () => {
        let read = this.reads.get(delivery.id);
        if (!read || performance.now() - read.at > WEBHOOK_HELD_STATE_MAX_AGE_MS || read.at < lane.failedAt) {
          // Read again for this delivery, the others in the lane's slots and the next round queued behind
          // them: slots given out together share one read, and rows further back would be stale again by
          // the time their turn comes.
          const next = lane.waiting.slice(0, this.perSubscription).map((w) => w.delivery.id);
          const ids = [...lane.sending, ...next];
          read = this.read(ids, true);
          for (const id of ids) this.reads.set(id, read);
        }
        return (await read.states).get(delivery.id);
      },
      free: (failed) => {
        if (freed) return;
        freed = true;
        this.reads.delete(delivery.id);
        lane.sending.delete(delivery.id);
        if (failed) lane.failedAt = performance.now();
        lane.active--;
        this.active--;
        if (lane.active === 0 && lane.waiting.length === 0 && !lane.inTurn) {
          this.lanes.delete(delivery.subscriptionId);
        }
        if (this.closed) return;
        this.enterTurn(lane);
        this.grantFree();
      },
    };
  }

  /** One read of `ids`; `renew`: their leases renewed first (a read again before a send). */
  private read(ids: readonly string[], renew: boolean): StateRead {
    const { store, now, lease, onError } = this.options;
    const find = () => {
      const at = now();
      const renewal =
        renew && lease ? { owner: lease.owner, until: new Date(at.getTime() + lease.ms) } : undefined;
      return findDeliveriesToSend(store, ids, at, renewal);
    };
    const states = find().catch(async (error: unknown) => {
      onError(error);
      await sleep(STATE_READ_RETRY_DELAY_MS);
      return find();
    });
    // Each send turns a failed read into its own failed attempt; this only stops Node calling it unhandled.
    states.catch(() => {});
    return { at: performance.now(), states };
  }
}
