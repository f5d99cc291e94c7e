/** `mkoba help`: every command, its options, and the configuration it reads from the environment. */
export const HELP = `mkoba: wallet, transfer and webhook service

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
