/**
 * Escaping text for HTML: the console's pages and the printable receipt both put untrusted values into markup
 * through this one function, so the two cannot drift apart on which characters are escaped.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** The text with every character that HTML gives a meaning (in content and in quoted attributes) escaped. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}
