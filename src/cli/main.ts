/**
 * `mkoba`: serve the API, run workers, migrate, manage API keys, and (against a running server) forward
 * events and trigger test events. Informational lines go to stderr; results to stdout.
 */
import { writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { type AdminCommand, type AdminProgress, type AdminResult, runAdminCommand } from '../app/admin.ts';
import { systemDeps } from '../app/deps.ts';
import { SANDBOX_ORGANIZATION_NAME } from '../app/seed.ts';
import { ConfigError } from '../config/variables.ts';
import { CONTROL_SOCKET_WAIT_MS, type Config, loadConfig } from '../config.ts';
import { DEFAULT_SCOPES, SCOPES, type Scope } from '../domain/apiKeys.ts';
import { ID_PREFIXES } from '../domain/ids.ts';
import { documentationOnlyDeps } from '../main.ts';
import { limitHeapGrowth } from '../processMemory.ts';
import { loadKeyring } from '../processSecrets.ts';
import { DataDirBusyError, type OpenedStore, openLaunchGateSource, openStore } from '../processStore.ts';
import { apiTargetOf } from './apiClient.ts';
import { ControlChannelNotListeningError, sendControlCommand } from './controlChannel.ts';
import { UsageError } from './usageError.ts';

/** Who runs this CLI, as keys and evidence record it: the OS user (its uid when it has no name). */
function operatorName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}

const HELP = `mkoba: wallet, transfer and webhook service

Usage:
  mkoba serve                       Start the API (migrates, and seeds the sandbox once); says
                                    what it does on stderr (creating the embedded database takes
                                    a while at the first start), then prints the banner (base URL,
                                    API reference, sandbox key) on stdout
  mkoba migrate                     Apply pending database migrations
  mkoba keys create --organization NAME [--scopes read,write[,compliance,admin]] [--member EMAIL]
                                    Create an API key (and the organization if it is new);
                                    prints only the key on stdout. With --member the key acts
                                    for that member: its scopes default to (and never exceed)
                                    what the member's roles grant, and its actions are theirs.
                                    The only way to a key for another member or to a server key
                                    with more than read,write (a server key never votes, clears,
                                    rejects, freezes or unfreezes); records the OS user who ran
                                    it with the key and in the organization's evidence.
                                    In pilot and production it refuses (exit 1), naming them,
                                    while any of the organization's launch gates is open
  mkoba launch-gates list --organization NAME
                                    The organization's launch gates: product/gate, state, when
                                    it changed, and what is missing (the sandbox evaluates them;
                                    pilot and production read the sandbox's record)
  mkoba launch-gates override --organization NAME --reason TEXT [--gate GATE]... [--product P]...
                                    Pilot and production: record an operator's override of the
                                    open gates (all, or those named) as evidence, so keys can be
                                    issued; prints each gate overridden
  mkoba members add EMAIL --role ROLE [--role ROLE] [--organization NAME]
                                    Add a member with signer roles (initiator, approver, admin,
                                    compliance, viewer); prints the member id
  mkoba members list [--organization NAME]
  mkoba members remove EMAIL [--organization NAME]
                                    Remove a member: their keys stop working
                                    (--organization defaults to the sandbox's in the sandbox)
  mkoba console-link --member EMAIL [--organization NAME]
                                    Print a one-time link that signs the member in to the
                                    operator console (/console); it works once, within 15 minutes
  mkoba keys list [--organization NAME]
                                    List an organization's keys (prefixes only), each with its
                                    member and who created it (--organization defaults to the
                                    sandbox's in the sandbox)
  mkoba keys revoke KEY_ID          Revoke a key (key_…); revoked keys get 401 api_key_revoked
  mkoba worker                      Run the background work without the API: webhook dispatcher,
                                    idempotency pruning and (sandbox) the rail worker
  mkoba ledger verify               Check every ledger invariant; exits 1 naming each violation
  mkoba evidence verify             Recompute every organization's evidence hash chain; exits 1
                                    naming the first broken record of each broken chain
  mkoba sanctions import FILE       Load a sanctions list CSV (id,name,aliases,type,country,
                                    date_of_birth,program) as a new version and make it active;
                                    a malformed file is refused naming its line and field
  mkoba sanctions list              List the sanctions list versions (the active one marked *)
  mkoba orgs set-webhooks ORG_ID on|off
                                    Allow or refuse an organization's new webhook subscriptions
                                    (on by default in the sandbox, off in production)
  mkoba subscriptions promote --organization NAME [--subscription whsub_…]...
                                    Pilot and production: copy the organization's enabled sandbox
                                    subscriptions (all, or those named) here, each with a new
                                    secret printed once; records the OS user who ran it as evidence
  mkoba encryption rewrap           Re-wrap every stored secret's data key under MKOBA_ENCRYPTION_KEY,
                                    so that the keys in MKOBA_ENCRYPTION_KEYS_PREVIOUS can be retired
  mkoba listen --forward-to URL [--events TYPE,TYPE] [--secret whsec_…]
               [--payload-format snake_case|camel_case] [--api-version DATE]
                                    Forward a running server's new events to URL (e.g. your
                                    local receiver), signed with a secret it prints at start,
                                    in the spelling and payload version a subscription would get;
                                    one line per forward; Ctrl-C stops
  mkoba export TYPE [--format csv|jsonl] [--from ISO] [--to ISO] [--organization NAME] [--out FILE]
                                    Export transfers, ledger_entries, events, evidence or
                                    reconciliation_exceptions now, with a progress bar; prints the
                                    file's path
  mkoba batches submit FILE --source WALLET_ID [--reference REF] [--wait] [--timeout SECONDS]
                                    Submit a payment batch (a CSV upload, or a JSON file of items)
                                    to a running server and follow it with a progress bar; prints
                                    the batch id, then items accepted (each became a transfer),
                                    refused and canceled, and the transfers settled, failed and in
                                    flight. Accepted is not paid: --wait also follows the transfers
                                    until none is in flight. Gives up after --timeout (default 600 s).
                                    Exits 0 when every item was accepted and no transfer failed
                                    (with --wait: when every item's transfer settled), else 1
  mkoba trigger EVENT_TYPE          Emit a sandbox test event (e.g. transfer.settled); prints its id
                                    listen, trigger and batches talk to the server over HTTP:
                                    --api-key KEY (or MKOBA_API_KEY), --api-base URL (or
                                    MKOBA_API_BASE, default http://127.0.0.1:8080/v1)
  mkoba openapi [--out FILE]        Print (or write) the OpenAPI 3.1 document
  mkoba help                        Show this help

Configuration (environment):
  PORT                   HTTP port (default 8080; 0 picks a free one, printed at start)
  HOST                   Bind address (default 127.0.0.1)
  DATABASE_URL           PostgreSQL URL; when set the embedded database is not used
  MKOBA_DATA_DIR         Embedded (PGlite) data directory (default .mkoba)
  MKOBA_EXPORT_DIR       Where export files go (default <MKOBA_DATA_DIR>/exports)
  MKOBA_ENV              sandbox (default), pilot or production (pilot and production require
                         DATABASE_URL and never seed; pilot caps each organization's volume)
  MKOBA_SANDBOX_DATABASE_URL           Pilot and production: the sandbox's PostgreSQL, read for each
                                       organization's launch gates before its keys are issued
  MKOBA_PILOT_TRANSFERS_PER_DAY_MAX    Pilot: transfers per organization per currency per UTC day
                                       (default 500)
  MKOBA_PILOT_AMOUNT_PER_DAY_MAX       Pilot: amount per organization per currency per UTC day, in
                                       major units, e.g. KES:1000000.00,UGX:30000000 (defaults for
                                       KES, UGX, TZS, RWF, USD, USDC, USDT; other currencies carry
                                       nothing unless named)
  MKOBA_SANDBOX_API_KEY  Fixed sandbox key for the seed; must start with sk_sandbox_
  LOG_LEVEL              Server log level (default info: one JSON line per request on stderr)
  MKOBA_WEBHOOK_RETRY_SCHEDULE         Seconds before each webhook retry, comma-separated (default
                                       5,300,1800,7200,18000 then 36000 six times: about three days)
  MKOBA_WEBHOOK_TIMEOUT_MS             One delivery attempt's time-out (default 10000)
  MKOBA_WEBHOOK_DISABLE_AFTER_SECONDS  Disable an endpoint failing this long (default 432000: 5 days)
  MKOBA_RATE_LIMITS                    on (default) or off
  MKOBA_RATE_LIMIT_KEY_REQUESTS_PER_SECOND, MKOBA_RATE_LIMIT_KEY_BURST_REQUESTS
                                       Per API key (default 100 a second, bursts of 200)
  MKOBA_RATE_LIMIT_ORGANIZATION_REQUESTS_PER_SECOND, MKOBA_RATE_LIMIT_ORGANIZATION_BURST_REQUESTS
                                       Per organization, all its keys (default 200, bursts of 400)
  MKOBA_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE, MKOBA_RATE_LIMIT_AUTH_FAILURES_BURST
                                       Failed key authentications per client address (default 10, 20)
  REDIS_URL              Share the rate limits between server processes through this Redis
  MKOBA_WEBHOOK_ALLOW_PRIVATE          1: the sandbox accepts webhook URLs to loopback, private and
                                       reserved addresses, and plain HTTP to them (local development;
                                       default 0: the production address rules)
  MKOBA_ENCRYPTION_KEY                 Master key sealing secrets at rest: 32 random bytes, base64 or
                                       hex (openssl rand -base64 32). Required in production and with
                                       DATABASE_URL; the embedded sandbox generates one in its data
                                       directory
  MKOBA_ENCRYPTION_KEYS_PREVIOUS       Older master keys, comma-separated, that only open what they
                                       sealed (until mkoba encryption rewrap)

The embedded database admits one process at a time: commands run while 'mkoba serve' is up are
carried out by the server (over <MKOBA_DATA_DIR>/control.sock), and a second 'mkoba serve' on the
same directory stops at once.

Informational lines go to stderr; results (keys, lists, documents, serve's banner) to stdout.
Exit status: 0 success, 1 failure, 2 invalid configuration or usage.
`;

type Io = { out: (line: string) => void; err: (line: string) => void };
const defaultIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

const CONTROL_SOCKET_POLL_INTERVAL_MS = 200;

/**
 * Runs an operator command: in this process when it can open the database, else through the server that
 * holds the embedded data directory. A server still starting has taken the lock but not yet opened its
 * control socket, so the command waits for it (bounded); if that server stops instead, the lock is free
 * and the command runs here after all.
 */
async function runAdmin(
  config: Config,
  io: Io,
  command: AdminCommand,
  onProgress?: (progress: AdminProgress) => void,
): Promise<AdminResult> {
  const deadline = Date.now() + CONTROL_SOCKET_WAIT_MS;
  let waitAnnounced = false;
  for (;;) {
    const opened = await openStore(config, 'cli', io.err);
    if ('store' in opened) {
      if (opened.createdDatabase) io.err(newDatabaseWarning(config.dataDir));
      return runHere(config, opened, command, onProgress);
    }
    if (!opened.socket) throw new DataDirBusyError(config.dataDir, opened);
    try {
      return await sendControlCommand(opened.socket, command, onProgress);
    } catch (error) {
      if (!(error instanceof ControlChannelNotListeningError)) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(`mkoba serve (process ${opened.pid}) could not run the command: ${reason}`);
      }
      if (Date.now() >= deadline) {
        throw new Error(
          `mkoba serve (process ${opened.pid}) holds ${config.dataDir} but did not open its control socket within ${CONTROL_SOCKET_WAIT_MS} ms; is it stuck?`,
        );
      }
      if (!waitAnnounced) io.err(`waiting for mkoba serve (process ${opened.pid}) to finish starting`);
      waitAnnounced = true;
      await new Promise((resolve) => setTimeout(resolve, CONTROL_SOCKET_POLL_INTERVAL_MS));
    }
  }
}

/**
 * A command on a data directory that holds no database creates one: said aloud, since the likely intent
 * was a server's existing database in another directory.
 */
function newDatabaseWarning(dataDir: string): string {
  return `mkoba: warning: ${dataDir} held no database, so a new empty one was created there. If you meant a server's database, set MKOBA_DATA_DIR to that server's data directory (or DATABASE_URL).`;
}

async function runHere(
  config: Config,
  opened: OpenedStore,
  command: AdminCommand,
  onProgress?: (progress: AdminProgress) => void,
): Promise<AdminResult> {
  // Only the commands that read the launch gates open the sandbox's database (pilot and production).
  const launchGateSource = [
    'keys.create',
    'launch-gates.list',
    'launch-gates.override',
    'subscriptions.promote',
  ].includes(command.name)
    ? await openLaunchGateSource(config)
    : undefined;
  try {
    // Only the commands that handle secrets need the master keys.
    const keyring = ['encryption.rewrap', 'subscriptions.promote'].includes(command.name)
      ? loadKeyring(config, opened.lock !== undefined)
      : undefined;
    const deps = systemDeps(opened.store, config.environment, {
      ...(keyring ? { keyring } : {}),
      exportDirectory: config.exportDir,
      launchGateSource,
    });
    // A fresh data directory is migrated first, so `keys create` works before the first `serve`.
    if (command.name !== 'migrate') await runAdminCommand(deps, { name: 'migrate' });
    return await runAdminCommand(deps, command, onProgress);
  } finally {
    await launchGateSource?.close();
    await opened.close();
  }
}

/**
 * Where the console is reached when no running server said so: MKOBA_PUBLIC_URL, else this machine's HOST
 * and PORT.
 */
function consoleBaseUrl(config: Config): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** The organization a command names, else (in the sandbox) the sandbox's own, as the README's examples assume. */
function organizationOrSandbox(named: string | undefined, config: Config): string | undefined {
  return named ?? (config.environment === 'sandbox' ? SANDBOX_ORGANIZATION_NAME : undefined);
}

function parseScopes(text: string | undefined): Scope[] {
  if (text === undefined) return [...DEFAULT_SCOPES];
  const scopes = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new UsageError(`--scopes takes a comma-separated list of ${SCOPES.join(', ')}; got '${text}'`);
  }
  return scopes as Scope[];
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        organization: { type: 'string' },
        scopes: { type: 'string' },
        member: { type: 'string' },
        source: { type: 'string' },
        format: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        reference: { type: 'string' },
        wait: { type: 'boolean' },
        timeout: { type: 'string' },
        role: { type: 'string', multiple: true },
        out: { type: 'string' },
        'forward-to': { type: 'string' },
        events: { type: 'string' },
        secret: { type: 'string' },
        'payload-format': { type: 'string' },
        'api-version': { type: 'string' },
        'api-key': { type: 'string' },
        'api-base': { type: 'string' },
        reason: { type: 'string' },
        gate: { type: 'string', multiple: true },
        subscription: { type: 'string', multiple: true },
        product: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    });
    const [command, sub, ...rest] = positionals;
    if (values.help || command === undefined || command === 'help') {
      io.out(HELP);
      return 0;
    }
    if (command === 'openapi') {
      // The document depends only on the route schemas, so no database is opened.
      const { buildApp } = await import('../http/app.ts');
      const app = await buildApp({ deps: documentationOnlyDeps() });
      const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
      await app.close();
      if (values.out) await writeFile(values.out, text);
      else process.stdout.write(text);
      return 0;
    }
    // These talk to a running server over HTTP and need none of the server's configuration.
    if (command === 'listen') {
      const { listenOptionsOf, runListen } = await import('./listen.ts');
      return await runListen(listenOptionsOf(values, apiTargetOf(values, process.env)), io);
    }
    if (command === 'batches') {
      const { batchesCommand } = await import('./batches.ts');
      return await batchesCommand(
        sub,
        rest,
        { source: values.source, reference: values.reference, wait: values.wait, timeout: values.timeout },
        apiTargetOf(values, process.env),
        io,
      );
    }
    if (command === 'trigger') {
      const { trigger } = await import('./trigger.ts');
      return await trigger(apiTargetOf(values, process.env), sub, io);
    }
    const config = loadConfig();
    switch (command) {
      case 'serve': {
        const { serve } = await import('./serve.ts');
        return await serve(config, io);
      }
      case 'migrate': {
        const result = await runAdmin(config, io, { name: 'migrate' });
        if (result.name === 'migrate') {
          io.err(result.applied.length ? `applied: ${result.applied.join(', ')}` : 'database is up to date');
        }
        return 0;
      }
      case 'keys': {
        if (sub === 'create') {
          if (!values.organization) throw new UsageError('keys create needs --organization NAME');
          const result = await runAdmin(config, io, {
            name: 'keys.create',
            organization: values.organization,
            // A member's key takes the member's scopes unless narrower ones are named.
            scopes:
              values.member !== undefined && values.scopes === undefined
                ? undefined
                : parseScopes(values.scopes),
            member: values.member,
            // Who ran it, recorded with the key and in the organization's evidence.
            operator: operatorName(),
          });
          if (result.name === 'keys.create') {
            io.err(
              `created key ${result.keyId} for organization ${result.organizationId}${result.organizationCreated ? ' (new)' : ''}`,
            );
            io.out(result.key);
          }
          return 0;
        }
        if (sub === 'list') {
          const organization = organizationOrSandbox(values.organization, config);
          if (!organization) throw new UsageError('keys list needs --organization NAME');
          const result = await runAdmin(config, io, { name: 'keys.list', organization });
          if (result.name === 'keys.list') {
            for (const k of result.keys) {
              io.out(
                `${k.id}\t${k.prefix}…\t${k.scopes.join(',')}\t${k.memberId ?? 'no member'}\tby ${k.createdBy}\t${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}`,
              );
            }
          }
          return 0;
        }
        if (sub === 'revoke') {
          const keyId = rest[0];
          if (!keyId) throw new UsageError('keys revoke needs a KEY_ID (key_…)');
          const result = await runAdmin(config, io, { name: 'keys.revoke', keyId });
          if (result.name === 'keys.revoke' && !result.found) {
            io.err(`no key ${keyId}`);
            return 1;
          }
          io.err(`revoked ${keyId}`);
          return 0;
        }
        throw new UsageError(`unknown keys command '${sub ?? ''}': use create, list or revoke`);
      }
      case 'worker': {
        if (config.databaseUrl) limitHeapGrowth();
        const { startWorkerProcess } = await import('../main.ts');
        const worker = await startWorkerProcess(config, io.err);
        io.err(
          `mkoba worker running (${config.databaseUrl ? 'PostgreSQL' : `embedded database in ${config.dataDir}`}); stop with Ctrl-C`,
        );
        await new Promise<void>((resolve) => {
          const stop = () => {
            io.err('stopping: finishing deliveries in flight');
            worker.stop().then(resolve, resolve);
          };
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
        return 0;
      }
      case 'ledger': {
        if (sub !== 'verify') throw new UsageError(`unknown ledger command '${sub ?? ''}': use verify`);
        const result = await runAdmin(config, io, { name: 'ledger.verify' });
        if (result.name !== 'ledger.verify') return 1;
        for (const v of result.violations) io.out(`${v.invariant}: ${v.detail}`);
        if (result.violations.length > 0) {
          io.err(`ledger verify: ${result.violations.length} violation(s)`);
          return 1;
        }
        io.err('ledger verify: all invariants hold');
        return 0;
      }
      case 'evidence': {
        if (sub !== 'verify') throw new UsageError(`unknown evidence command '${sub ?? ''}': use verify`);
        const result = await runAdmin(config, io, { name: 'evidence.verify' });
        if (result.name !== 'evidence.verify') return 1;
        const broken = result.chains.filter((c) => c.break);
        for (const chain of broken) {
          const at = chain.break;
          io.out(
            `${chain.organizationId}: broken at sequence ${at?.sequence}${at?.recordId ? ` (${at.recordId})` : ''}: ${at?.reason}`,
          );
        }
        const records = result.chains.reduce((n, c) => n + c.recordsVerified, 0);
        if (broken.length > 0) {
          io.err(`evidence verify: ${broken.length} of ${result.chains.length} chain(s) broken`);
          return 1;
        }
        io.err(`evidence verify: ${result.chains.length} chain(s), ${records} record(s), all intact`);
        return 0;
      }
      case 'orgs': {
        if (sub !== 'set-webhooks')
          throw new UsageError(`unknown orgs command '${sub ?? ''}': use set-webhooks`);
        const [organizationId, state] = rest;
        if (
          !organizationId?.startsWith(`${ID_PREFIXES.organization}_`) ||
          (state !== 'on' && state !== 'off')
        ) {
          throw new UsageError('orgs set-webhooks needs an ORG_ID (org_…) and on or off');
        }
        const result = await runAdmin(config, io, {
          name: 'orgs.set-webhooks',
          organizationId,
          enabled: state === 'on',
        });
        if (result.name !== 'orgs.set-webhooks') return 1;
        if (!result.found) {
          io.err(`no organization ${organizationId}`);
          return 1;
        }
        io.err(
          `webhook subscriptions for ${organizationId} (${result.organizationName}): ${result.enabled ? 'on' : 'off'}`,
        );
        return 0;
      }
      case 'export': {
        const organization = organizationOrSandbox(values.organization, config);
        if (!organization) throw new UsageError('export needs --organization NAME');
        const { exportCommand } = await import('./exports.ts');
        return await exportCommand(
          sub,
          { format: values.format, from: values.from, to: values.to, out: values.out, organization },
          io,
          (command, onProgress) => runAdmin(config, io, command, onProgress),
        );
      }
      case 'members': {
        const organization = organizationOrSandbox(values.organization, config);
        if (!organization) throw new UsageError(`members ${sub ?? ''} needs --organization NAME`);
        const { membersCommand, rolesOf } = await import('./members.ts');
        return await membersCommand(sub, rest, { organization, roles: rolesOf(values.role) }, io, (command) =>
          runAdmin(config, io, command),
        );
      }
      case 'launch-gates': {
        const { launchGatesCommand } = await import('./launchGates.ts');
        return await launchGatesCommand(
          sub,
          {
            organization: values.organization,
            reason: values.reason,
            gates: values.gate,
            products: values.product,
          },
          io,
          (command) => runAdmin(config, io, command),
        );
      }
      case 'subscriptions': {
        const { subscriptionsCommand } = await import('./subscriptions.ts');
        return await subscriptionsCommand(
          sub,
          { organization: values.organization, subscriptions: values.subscription, operator: operatorName() },
          io,
          (command) => runAdmin(config, io, command),
        );
      }
      case 'console-link': {
        const organization = organizationOrSandbox(values.organization, config);
        if (!organization) throw new UsageError('console-link needs --organization NAME');
        if (!values.member) throw new UsageError('console-link needs --member EMAIL');
        const result = await runAdmin(config, io, {
          name: 'console.link',
          organization,
          member: values.member,
        });
        if (result.name !== 'console.link') return 1;
        io.err(
          `one-time console sign-in link for ${result.email} in ${organization}, valid until ${result.expiresAt}:`,
        );
        io.out(
          `${result.baseUrl?.replace(/\/+$/, '') ?? consoleBaseUrl(config)}/console/sign-in/link?token=${result.token}`,
        );
        return 0;
      }
      case 'sanctions': {
        const { sanctionsCommand } = await import('./sanctions.ts');
        return await sanctionsCommand(sub, rest, io, (command, onProgress) =>
          runAdmin(config, io, command, onProgress),
        );
      }
      case 'encryption': {
        if (sub !== 'rewrap') throw new UsageError(`unknown encryption command '${sub ?? ''}': use rewrap`);
        const result = await runAdmin(config, io, { name: 'encryption.rewrap' });
        if (result.name !== 'encryption.rewrap') return 1;
        io.err(
          `re-wrapped or sealed ${result.secrets} webhook secret(s), ${result.responses} stored response(s) and ${result.railPartnerCredentials} rail partner credential set(s); every secret is now under master key ${result.keyId}`,
        );
        return 0;
      }
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err(`mkoba: invalid configuration: ${error.message}`);
      return 2;
    }
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`mkoba: ${(error as Error).message}\nRun 'mkoba help' for usage.`);
      return 2;
    }
    if (error instanceof DataDirBusyError) {
      io.err(`mkoba: ${error.message}`);
      return 1;
    }
    io.err(`mkoba: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
