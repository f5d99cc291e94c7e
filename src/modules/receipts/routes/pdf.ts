/**
 * The receipt as a PDF: the same facts as the printable page, one A4 page in the built-in Helvetica (no font
 * files to ship). Deterministic: the document's creation date is the receipt's issue time, not the clock,
 * and PDFKit derives the file ID from the document info, so the same receipt gives the same bytes.
 */
import { type Receipt, receiptFields } from '../domain.ts';
import { receiptRows } from './rows.ts';

/** PostScript points (1/72 inch): about 2 cm. */
const PAGE_MARGIN_PT = 56;
const TITLE_FONT_SIZE_PT = 20;
const BODY_FONT_SIZE_PT = 11;
const CODE_FONT_SIZE_PT = 14;
/** Width of the label column of the facts table. */
const LABEL_COLUMN_PT = 130;
/** Space below each row of the table. */
const ROW_GAP_PT = 6;
const FONT = 'Helvetica';
const BOLD_FONT = 'Helvetica-Bold';
/** Drawn in place of a character the standard fonts cannot show. */
const UNSHOWABLE = '?';
/** Characters outside Latin-1 that WinAnsiEncoding (the standard fonts' encoding) still has a glyph for. */
const WIN_ANSI_EXTRAS = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/**
 * The standard fonts are single-byte WinAnsi: PDFKit would write any other character as garbage, so it
 * becomes a visible `?` instead (an organization name in another script prints that way; the JSON and HTML
 * forms carry it intact).
 */
function showable(value: string): string {
  return [...value.normalize('NFC')]
    .map((c) => {
      const code = c.codePointAt(0) ?? 0;
      const latin1 = (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff);
      return latin1 || WIN_ANSI_EXTRAS.has(c) ? c : UNSHOWABLE;
    })
    .join('');
}

/**
 * PDFKit (with its font and compression code, some 20 MB of a process's memory) is loaded at the first
 * receipt asked for as a PDF, not at start: most processes never render one.
 */
export async function receiptPdf(receipt: Receipt, verifyUrl: string): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit');
  const f = receiptFields(receipt);
  const doc = new PDFDocument({
    size: 'A4',
    margin: PAGE_MARGIN_PT,
    info: {
      Title: `Receipt ${f.code}`,
      Subject: 'Payment receipt',
      Creator: 'Mkoba',
      CreationDate: receipt.issuedAt,
    },
  });
  const chunks: Uint8Array[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Uint8Array) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const left = doc.page.margins.left;
  const valueWidth = doc.page.width - left - doc.page.margins.right - LABEL_COLUMN_PT;
  doc.font(BOLD_FONT).fontSize(TITLE_FONT_SIZE_PT).text('Payment receipt');
  doc.font(FONT).fontSize(BODY_FONT_SIZE_PT).text(showable(f.organization)).moveDown();

  for (const [label, value] of receiptRows(f)) {
    const top = doc.y;
    doc.font(BOLD_FONT).text(label, left, top, { width: LABEL_COLUMN_PT });
    const labelBottom = doc.y;
    doc.font(FONT).text(showable(value ?? '—'), left + LABEL_COLUMN_PT, top, { width: valueWidth });
    doc.y = Math.max(labelBottom, doc.y) + ROW_GAP_PT;
  }

  doc.x = left;
  doc.moveDown().text('Verification code:');
  doc.font(BOLD_FONT).fontSize(CODE_FONT_SIZE_PT).text(f.code);
  doc.font(FONT).fontSize(BODY_FONT_SIZE_PT).moveDown().text('Check it at:');
  doc.fillColor('blue').text(showable(verifyUrl), { link: verifyUrl });
  doc.end();
  return done;
}
