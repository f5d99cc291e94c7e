/** The printable receipt: one self-contained HTML page (inline styles, no scripts), every value escaped. */
import { escapeHtml } from '../../../domain/html.ts';
import { type Receipt, receiptFields } from '../domain.ts';
import { receiptRows } from './rows.ts';

export function receiptHtml(receipt: Receipt, verifyUrl: string): string {
  const f = receiptFields(receipt);

  const body = receiptRows(f)
    .map(
      ([label, value]) =>
        `<tr><th scope="row">${escapeHtml(label)}</th><td>${escapeHtml(value ?? '—')}</td></tr>`,
    )
    .join('\n        ');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Receipt ${escapeHtml(f.code)}</title>
    <style>
      body { font: 15px/1.5 system-ui, sans-serif; color: #111; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
      h1 { font-size: 1.4rem; margin-bottom: 0.25rem; }
      table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
      th, td { text-align: left; padding: 0.4rem 0.5rem; border-bottom: 1px solid #ccc; vertical-align: top; }
      th { width: 11rem; font-weight: 600; }
      .code { font: 600 1.1rem ui-monospace, monospace; letter-spacing: 0.05em; }
      @media print { body { margin: 0; } a { color: inherit; text-decoration: none; } }
    </style>
  </head>
  <body>
    <main>
      <h1>Payment receipt</h1>
      <p>${escapeHtml(f.organization)}</p>
      <table>
        ${body}
      </table>
      <p>Verification code: <span class="code">${escapeHtml(f.code)}</span></p>
      <p>Check it at <a href="${escapeHtml(verifyUrl)}">${escapeHtml(verifyUrl)}</a>.</p>
    </main>
  </body>
</html>
`;
}
