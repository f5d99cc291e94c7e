/**
 * The README tells integrators to send an `Idempotency-Key` with every write; its examples, and the
 * docs', do so. Every `curl` command in README.md and docs/*.md that writes to the service (-X POST, PUT,
 * PATCH or DELETE, or a body with -d, which curl sends as a POST) must carry the header. A call to a partner's
 * API (the sandbox's Daraja simulator, `$DARAJA/…`, as a payer's payment is made there) is the partner's,
 * which takes no such header.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const REPOSITORY = new URL('../', import.meta.url);
const DOCUMENTS = [
  'README.md',
  ...readdirSync(new URL('docs/', REPOSITORY))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const WRITE_METHOD = /(?:^|\s)(?:-X|--request)\s*'?(POST|PUT|PATCH|DELETE)\b/;
const BODY_FLAG = /(?:^|\s)(?:-d|--data(?:-raw|-binary|-urlencode)?|-F|--form)\s/;
/** A request to a partner's API rather than the service's: its URL (outside any quoted argument). */
const PARTNER_API = /\s\$DARAJA\//;
const QUOTED = /'[^']*'|"[^"]*"/g;

/** Each `curl` command in `text`, whole: across `\` line continuations and quoted multi-line bodies. */
function curlCommands(text: string): string[] {
  const commands: string[] = [];
  for (let start = text.indexOf('curl '); start !== -1; start = text.indexOf('curl ', start + 1)) {
    let quote: string | undefined;
    let end = start;
    for (; end < text.length; end++) {
      const char = text[end];
      if (quote) {
        if (char === quote) quote = undefined;
      } else if (char === "'" || char === '"') {
        quote = char;
      } else if (char === '\n' && text[end - 1] !== '\\') {
        break;
      } else if (char === '`') {
        break; // the end of an inline code span
      }
    }
    commands.push(text.slice(start, end));
  }
  return commands;
}

function isWrite(command: string): boolean {
  return (
    (WRITE_METHOD.test(command) || BODY_FLAG.test(command)) && !PARTNER_API.test(command.replace(QUOTED, ''))
  );
}

describe('curl examples in the README and the docs', () => {
  it('finds writes and reads apart, across continuation lines and multi-line bodies', () => {
    const [write, read, body] = curlCommands(
      [
        'curl -s -X POST $BASE/v1/wallets \\\n  -H \'Content-Type: application/json\' \\\n  -d \'{\n  "currency": "KES"\n}\'',
        'curl -s -H "Authorization: Bearer $KEY" $BASE/v1/wallets',
        "curl $BASE/v1/transfers -d '{}'",
      ].join('\n'),
    );
    expect(isWrite(write ?? '')).toBe(true);
    expect(write).toContain('"currency": "KES"');
    expect(isWrite(read ?? '')).toBe(false);
    expect(isWrite(body ?? '')).toBe(true);
    // A payment made at the partner's own API is the partner's request, not a write to the service.
    expect(isWrite("curl -X POST $DARAJA/mpesa/c2b/v1/simulate -d '{}'")).toBe(false);
    expect(isWrite("curl -X POST $BASE/v1/transfers -H 'X-Partner: $DARAJA/' -d '{}'")).toBe(true);
  });

  it('send an Idempotency-Key with every write', () => {
    const missing: string[] = [];
    let writes = 0;
    for (const document of DOCUMENTS) {
      for (const command of curlCommands(readFileSync(new URL(document, REPOSITORY), 'utf8'))) {
        if (!isWrite(command)) continue;
        writes += 1;
        if (!/-H\s*['"]Idempotency-Key: [\x21-\x7E]+['"]/i.test(command)) {
          missing.push(`${document}: ${command.split('\n')[0]}`);
        }
      }
    }
    // The README alone has several: finding none would mean the search is broken, not the docs right.
    expect(writes).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });
});
