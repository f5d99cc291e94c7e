/**
 * `mkoba`: serve the API, run workers, migrate, manage API keys, and (against a running server) forward
 * events and trigger test events. Informational lines go to stderr; results to stdout.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/variables.ts';
import { type Config, loadConfig } from '../config.ts';
import { ID_PREFIXES } from '../domain/ids.ts';
import { DataDirBusyError } from '../processStore.ts';
import { apiTargetOf } from './apiClient.ts';
import { HELP } from './help.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };
const defaultIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** Every option any command takes; each command reads the ones it knows. */
const OPTIONS = {
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
} as const;

function parseCommandLine(argv: string[]) {
  return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
}

/** A command's subcommand, the words after it, and the options given. */
interface CommandLine {
  sub: string | undefined;
  rest: string[];
  values: ReturnType<typeof parseCommandLine>['values'];
}

// Each command imports what it needs when it runs: the operator commands bring in the whole application
// (seconds of loading through tsx), which `help`, `listen`, `trigger` and `batches` never use.

/** A command that needs none of the server's configuration: it talks to a running server over HTTP, or opens nothing. */
type ServerlessCommand = (line: CommandLine, io: Io) => Promise<number>;
/** A command that runs with the configuration (and most of them, an operator command on the database). */
type ConfiguredCommand = (line: CommandLine, config: Config, io: Io) => Promise<number>;

const SERVERLESS_COMMANDS: Record<string, ServerlessCommand> = {
  openapi: openapiCommand,
  listen: listenCommand,
  batches: batchesCommandLine,
  trigger: triggerCommand,
};

const CONFIGURED_COMMANDS: Record<string, ConfiguredCommand> = {
  serve: serveCommand,
  migrate: migrateCommand,
  keys: async ({ sub, rest, values }, config, io) =>
    (await import('./keys.ts')).keysCommand(sub, rest, values, config, io),
  worker: async (_line, config, io) => (await import('./worker.ts')).workerCommand(config, io),
  ledger: async ({ sub }, config, io) => (await import('./verify.ts')).ledgerCommand(sub, config, io),
  evidence: async ({ sub }, config, io) => (await import('./verify.ts')).evidenceCommand(sub, config, io),
  orgs: orgsCommand,
  export: exportCommandLine,
  members: membersCommandLine,
  'launch-gates': launchGatesCommandLine,
  subscriptions: subscriptionsCommandLine,
  'console-link': consoleLinkCommand,
  sanctions: sanctionsCommandLine,
  encryption: encryptionCommand,
};

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  try {
    const { values, positionals } = parseCommandLine(argv);
    const [command, sub, ...rest] = positionals;
    if (values.help || command === undefined || command === 'help') {
      io.out(HELP);
      return 0;
    }
    const line: CommandLine = { sub, rest, values };
    const serverless = commandNamed(SERVERLESS_COMMANDS, command);
    if (serverless) return await serverless(line, io);
    const config = loadConfig();
    const configured = commandNamed(CONFIGURED_COMMANDS, command);
    if (!configured) throw new UsageError(`unknown command '${command}'`);
    return await configured(line, config, io);
  } catch (error) {
    return failed(error, io);
  }
}

function commandNamed<T>(table: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/** Says why a command failed; returns its exit status: 2 for configuration or usage, else 1. */
function failed(error: unknown, io: Io): number {
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

/** `mkoba openapi`: the document depends only on the route schemas, so no database is opened. */
async function openapiCommand({ values }: CommandLine): Promise<number> {
  const { buildApp } = await import('../http/app.ts');
  const { documentationOnlyDeps } = await import('../main.ts');
  const app = await buildApp({ deps: documentationOnlyDeps() });
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  if (values.out) await writeFile(values.out, text);
  else process.stdout.write(text);
  return 0;
}

async function listenCommand({ values }: CommandLine, io: Io): Promise<number> {
  const { listenOptionsOf, runListen } = await import('./listen.ts');
  return runListen(listenOptionsOf(values, apiTargetOf(values, process.env)), io);
}

async function batchesCommandLine({ sub, rest, values }: CommandLine, io: Io): Promise<number> {
  const { batchesCommand } = await import('./batches.ts');
  return batchesCommand(
    sub,
    rest,
    { source: values.source, reference: values.reference, wait: values.wait, timeout: values.timeout },
    apiTargetOf(values, process.env),
    io,
  );
}

async function triggerCommand({ sub, values }: CommandLine, io: Io): Promise<number> {
  const { trigger } = await import('./trigger.ts');
  return trigger(apiTargetOf(values, process.env), sub, io);
}

async function serveCommand(_line: CommandLine, config: Config, io: Io): Promise<number> {
  const { serve } = await import('./serve.ts');
  return serve(config, io);
}

async function migrateCommand(_line: CommandLine, config: Config, io: Io): Promise<number> {
  const { runAdmin } = await import('./runAdmin.ts');
  const result = await runAdmin(config, io, { name: 'migrate' });
  if (result.name === 'migrate') {
    io.err(result.applied.length ? `applied: ${result.applied.join(', ')}` : 'database is up to date');
  }
  return 0;
}

async function orgsCommand({ sub, rest }: CommandLine, config: Config, io: Io): Promise<number> {
  const { runAdmin } = await import('./runAdmin.ts');
  if (sub !== 'set-webhooks') throw new UsageError(`unknown orgs command '${sub ?? ''}': use set-webhooks`);
  const [organizationId, state] = rest;
  if (!organizationId?.startsWith(`${ID_PREFIXES.organization}_`) || (state !== 'on' && state !== 'off')) {
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

async function exportCommandLine({ sub, values }: CommandLine, config: Config, io: Io): Promise<number> {
  const { runAdmin, organizationOrSandbox } = await import('./runAdmin.ts');
  const organization = organizationOrSandbox(values.organization, config);
  if (!organization) throw new UsageError('export needs --organization NAME');
  const { exportCommand } = await import('./exports.ts');
  return exportCommand(
    sub,
    { format: values.format, from: values.from, to: values.to, out: values.out, organization },
    io,
    (command, onProgress) => runAdmin(config, io, command, onProgress),
  );
}

async function membersCommandLine(
  { sub, rest, values }: CommandLine,
  config: Config,
  io: Io,
): Promise<number> {
  const { runAdmin, organizationOrSandbox } = await import('./runAdmin.ts');
  const organization = organizationOrSandbox(values.organization, config);
  if (!organization) throw new UsageError(`members ${sub ?? ''} needs --organization NAME`);
  const { membersCommand, rolesOf } = await import('./members.ts');
  return membersCommand(sub, rest, { organization, roles: rolesOf(values.role) }, io, (command) =>
    runAdmin(config, io, command),
  );
}

async function launchGatesCommandLine({ sub, values }: CommandLine, config: Config, io: Io): Promise<number> {
  const { runAdmin } = await import('./runAdmin.ts');
  const { launchGatesCommand } = await import('./launchGates.ts');
  return launchGatesCommand(
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

async function subscriptionsCommandLine(
  { sub, values }: CommandLine,
  config: Config,
  io: Io,
): Promise<number> {
  const { runAdmin, operatorName } = await import('./runAdmin.ts');
  const { subscriptionsCommand } = await import('./subscriptions.ts');
  return subscriptionsCommand(
    sub,
    { organization: values.organization, subscriptions: values.subscription, operator: operatorName() },
    io,
    (command) => runAdmin(config, io, command),
  );
}

async function consoleLinkCommand({ values }: CommandLine, config: Config, io: Io): Promise<number> {
  const { runAdmin, organizationOrSandbox } = await import('./runAdmin.ts');
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

/**
 * Where the console is reached when no running server said so: MKOBA_PUBLIC_URL, else this machine's HOST
 * and PORT.
 */
function consoleBaseUrl(config: Config): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

async function sanctionsCommandLine({ sub, rest }: CommandLine, config: Config, io: Io): Promise<number> {
  const { runAdmin } = await import('./runAdmin.ts');
  const { sanctionsCommand } = await import('./sanctions.ts');
  return sanctionsCommand(sub, rest, io, (command, onProgress) => runAdmin(config, io, command, onProgress));
}

async function encryptionCommand({ sub }: CommandLine, config: Config, io: Io): Promise<number> {
  const { runAdmin } = await import('./runAdmin.ts');
  if (sub !== 'rewrap') throw new UsageError(`unknown encryption command '${sub ?? ''}': use rewrap`);
  const result = await runAdmin(config, io, { name: 'encryption.rewrap' });
  if (result.name !== 'encryption.rewrap') return 1;
  io.err(
    `re-wrapped or sealed ${result.secrets} webhook secret(s), ${result.responses} stored response(s) and ${result.railPartnerCredentials} rail partner credential set(s); every secret is now under master key ${result.keyId}`,
  );
  return 0;
}
