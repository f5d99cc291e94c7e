/**
 * Where token buckets live: in this process (a bounded map), or in Redis, shared by every server process
 * that uses it, with the same arithmetic (src/domain/rateLimits.ts) in a Lua script that runs atomically.
 * ioredis is imported when a Redis store is opened, so a server without one never loads it.
 */
import {
  RATE_LIMIT_MEMORY_BUCKETS_MAX,
  RATE_LIMIT_REDIS_COMMAND_TIMEOUT_MS,
  RATE_LIMIT_REDIS_CONNECT_TIMEOUT_MS,
  RATE_LIMIT_REDIS_RECONNECT_DELAY_MS_MAX,
} from '../config.ts';
import { type BucketState, type BucketsTaken, type TokenBucket, takeTokens } from '../domain/rateLimits.ts';

export interface BucketRef {
  /** Unique across every bucket of the store, e.g. `key:key_…`. */
  id: string;
  bucket: TokenBucket;
}

export interface BucketStore {
  /** All or nothing (see takeTokens): `cost` from every bucket when each holds a token. */
  take(buckets: readonly BucketRef[], cost: number): Promise<BucketsTaken>;
  close(): Promise<void>;
}

/**
 * Buckets in a Map, least recently used first. Past `bucketsMax` it forgets the buckets that have
 * refilled (a missing bucket is a full one), then the least recently used, down to 90 % of the bound.
 */
export function memoryBucketStore(
  nowMs: () => number,
  bucketsMax: number = RATE_LIMIT_MEMORY_BUCKETS_MAX,
): BucketStore {
  const states = new Map<string, BucketState & { capacity: number; refillPerSecond: number }>();
  const evict = (now: number) => {
    for (const [id, state] of states) {
      if (state.tokens + ((now - state.updatedAtMs) * state.refillPerSecond) / 1000 >= state.capacity) {
        states.delete(id);
      }
    }
    const keep = Math.floor(bucketsMax * 0.9);
    for (const id of states.keys()) {
      if (states.size <= keep) break;
      states.delete(id);
    }
  };
  return {
    async take(buckets, cost) {
      const now = nowMs();
      const taken = takeTokens(
        buckets.map((b) => b.bucket),
        buckets.map((b) => states.get(b.id)),
        now,
        cost,
      );
      if (!taken.allowed || cost === 0) return taken;
      for (const [i, { id, bucket }] of buckets.entries()) {
        const tokens = taken.tokens[i] ?? bucket.capacity;
        states.delete(id);
        if (tokens < bucket.capacity) states.set(id, { tokens, updatedAtMs: now, ...bucket });
      }
      if (states.size > bucketsMax) evict(now);
      return taken;
    },
    async close() {
      states.clear();
    },
  };
}

/**
 * takeTokens in Lua, on Redis's own clock (TIME) so that servers with slightly different clocks agree.
 * KEYS are the buckets; ARGV[1] is the cost, then each bucket's capacity and refill per second. Returns
 * 1 or 0 (admitted or not), then each bucket's tokens after. A bucket that is full again is deleted, and
 * every other one expires once it would have refilled, so idle buckets take no memory.
 */
const TAKE_TOKENS_SCRIPT = `
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local cost = tonumber(ARGV[1])
local tokens = {}
local allowed = 1
for i, key in ipairs(KEYS) do
  local capacity = tonumber(ARGV[2 * i])
  local refill = tonumber(ARGV[2 * i + 1])
  local state = redis.call('HMGET', key, 'tokens', 'updated_ms')
  local available = capacity
  if state[1] and state[2] then
    local elapsed_ms = math.max(0, now_ms - tonumber(state[2]))
    available = math.min(capacity, tonumber(state[1]) + elapsed_ms * refill / 1000)
  end
  tokens[i] = available
  if available < 1 then allowed = 0 end
end
local result = { allowed }
for i, key in ipairs(KEYS) do
  local capacity = tonumber(ARGV[2 * i])
  local refill = tonumber(ARGV[2 * i + 1])
  if allowed == 1 and cost > 0 then
    tokens[i] = math.max(0, tokens[i] - cost)
    if tokens[i] >= capacity then
      redis.call('DEL', key)
    else
      redis.call('HSET', key, 'tokens', string.format('%.17g', tokens[i]), 'updated_ms', string.format('%.17g', now_ms))
      redis.call('PEXPIRE', key, math.ceil((capacity - tokens[i]) * 1000 / refill) + 1000)
    end
  end
  result[i + 1] = string.format('%.17g', tokens[i])
end
return result
`;

type TakeTokensCommand = (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<unknown[]>;

export interface RedisBucketStoreOptions {
  url: string;
  keyPrefix: string;
  /** Used while Redis cannot be reached, so limits still hold, per process. */
  fallback: BucketStore;
  onUnavailable(error: unknown): void;
  onRecovered(): void;
}

/**
 * Buckets in Redis. Redis being down or slow never fails a request: until it answers again, each process
 * falls back to its own buckets (commands are not queued while disconnected, and time out after
 * RATE_LIMIT_REDIS_COMMAND_TIMEOUT_MS). Resolves once connected, or once the first attempt has failed.
 */
export async function openRedisBucketStore(options: RedisBucketStoreOptions): Promise<BucketStore> {
  const { Redis } = await import('ioredis');
  const client = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: RATE_LIMIT_REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: RATE_LIMIT_REDIS_CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, RATE_LIMIT_REDIS_RECONNECT_DELAY_MS_MAX),
  });
  client.defineCommand('mkobaTakeTokens', { lua: TAKE_TOKENS_SCRIPT });
  const takeTokensCommand = (
    client as unknown as { mkobaTakeTokens: TakeTokensCommand }
  ).mkobaTakeTokens.bind(client);
  let available = true;
  const unavailable = (error: unknown) => {
    if (!available) return;
    available = false;
    options.onUnavailable(error);
  };
  const recovered = () => {
    if (available) return;
    available = true;
    options.onRecovered();
  };
  client.on('error', unavailable);
  client.on('ready', recovered);
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      client.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, RATE_LIMIT_REDIS_CONNECT_TIMEOUT_MS);
    client.once('ready', done);
    client.once('error', done);
  });

  return {
    async take(buckets, cost) {
      if (client.status !== 'ready') return options.fallback.take(buckets, cost);
      let reply: unknown[];
      try {
        reply = await takeTokensCommand(
          buckets.length,
          ...buckets.map((b) => options.keyPrefix + b.id),
          cost,
          ...buckets.flatMap((b) => [b.bucket.capacity, b.bucket.refillPerSecond]),
        );
      } catch (error) {
        unavailable(error);
        return options.fallback.take(buckets, cost);
      }
      recovered();
      return { allowed: reply[0] === 1, tokens: reply.slice(1).map(Number) };
    },
    async close() {
      client.disconnect();
      await options.fallback.close();
    },
  };
}
