/**
 * Server-rendered HTML as typed template literals: every interpolated value is escaped unless it is
 * already HTML (a `SafeHtml` made by `html`), so a page is safe by construction and tsc checks each
 * template's data. Arrays are joined; null, undefined and false render nothing.
 */
import { escapeHtml } from '../domain/html.ts';

export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Renderable = SafeHtml | string | number | bigint | boolean | null | undefined | Renderable[];

function render(value: Renderable): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** JSON for a `<script type="application/json">` block: `<` escaped so no text can close the element. */
export function jsonScript(id: string, value: unknown): SafeHtml {
  const text = JSON.stringify(value).replace(/</g, '\\u003c');
  return new SafeHtml(`<script type="application/json" id="${escapeHtml(id)}">${text}</script>`);
}
