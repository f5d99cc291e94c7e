/** Receipts: a settled transfer's receipt (JSON, a printable page or a PDF), and the public check of its code. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { READ_PROBLEMS } from '../../../http/problems.ts';
import {
  closedObjectSchema,
  found,
  organizationOf,
  publicOperation,
  readOperation,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { idParamsSchema } from '../../../http/schemas.ts';
import { publicReceiptFields, receiptFields } from '../domain.ts';
import { getReceipt, verifyReceipt } from '../useCases.ts';
import { receiptHtml } from './page.ts';
import { receiptPdf } from './pdf.ts';

const TAGS = ['Receipts'];

/** The verification link printed on a receipt: this server's own address. */
function verifyUrlOf(request: FastifyRequest, code: string): string {
  return `${request.protocol}://${request.host}/v1/receipts/verify?code=${encodeURIComponent(code)}`;
}

const RECEIPT_FORMATS = ['json', 'html', 'pdf'] as const;
type ReceiptFormat = (typeof RECEIPT_FORMATS)[number];

/**
 * `format` decides when given; otherwise `Accept`, where naming JSON keeps JSON, and a header naming both a
 * page and a PDF (as a browser's may) gets the page, as it did before PDFs existed.
 */
function receiptFormatOf(request: FastifyRequest, format: ReceiptFormat | undefined): ReceiptFormat {
  if (format !== undefined) return format;
  const accept = request.headers.accept ?? '';
  if (accept.includes('application/json')) return 'json';
  if (accept.includes('text/html')) return 'html';
  if (accept.includes('application/pdf')) return 'pdf';
  return 'json';
}

function transferReceiptRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string }; Querystring: { format?: ReceiptFormat } }>(
    '/v1/transfers/:id/receipt',
    readOperation({
      scope: 'read',
      operationId: 'getTransferReceipt',
      summary: 'Retrieve a transfer’s receipt',
      description:
        'For a transfer that has settled (and stays available if it is later returned, showing its status): the amount, parties (the destination masked), the rail reference, the journal entry that made it final, and a verification code anyone can check at `GET /v1/receipts/verify`. The code is issued on the first request and never changes. JSON by default; a printable HTML page with `format=html` (or `Accept: text/html`); a PDF with `format=pdf` (or `Accept: application/pdf`), dated by the receipt’s `issued_at` so that the same receipt gives the same bytes. A transfer that has not settled is a 409 `receipt_unavailable`.',
      tags: TAGS,
      params: idParamsSchema(ID_PREFIXES.transfer, 'Transfer id.'),
      querystring: closedObjectSchema({
        format: {
          type: 'string',
          enum: [...RECEIPT_FORMATS],
          description: 'JSON (default), the printable page, or a PDF.',
        },
      }),
      responses: {
        200: found(
          {
            content: {
              'application/json': { schema: { $ref: 'Receipt#' } },
              'text/html': { schema: { type: 'string', description: 'A printable page.' } },
              'application/pdf': {
                schema: { type: 'string', format: 'binary', description: 'The receipt as a one-page PDF.' },
              },
            },
          },
          'The receipt.',
        ),
      },
      problems: [...READ_PROBLEMS, 409],
    }),
    async (request, reply) => {
      const receipt = await getReceipt(deps, organizationOf(request), request.params.id);
      const format = receiptFormatOf(request, request.query.format);
      if (format === 'html') {
        return reply
          .type('text/html; charset=utf-8')
          .send(receiptHtml(receipt, verifyUrlOf(request, receipt.code)));
      }
      if (format === 'pdf') {
        // The code is [A-Z0-9-] only, so it goes into the quoted filename as it is.
        return reply
          .type('application/pdf')
          .header('content-disposition', `inline; filename="receipt-${receipt.code}.pdf"`)
          .send(await receiptPdf(receipt, verifyUrlOf(request, receipt.code)));
      }
      return reply
        .type('application/json; charset=utf-8')
        .send({ object: 'receipt', ...receiptFields(receipt) });
    },
  );
}

function verifyReceiptRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: { code: string } }>(
    '/v1/receipts/verify',
    publicOperation({
      operationId: 'verifyReceipt',
      summary: 'Verify a receipt code',
      description:
        'Public: whoever holds a receipt checks its code here, without an API key. A known code returns the receipt as the service holds it now (its `status` shows a later return), with the paying wallet masked like the destination (`source`: its last six characters); an unknown one is a 404.',
      tags: TAGS,
      querystring: closedObjectSchema(
        {
          code: {
            type: 'string',
            minLength: 1,
            maxLength: 64,
            description:
              'The code printed on the receipt, e.g. MKR-7F3K-Q9ZD-2M8B-XH4T-P6WC (any case, dashes optional).',
          },
        },
        ['code'],
      ),
      responses: { 200: found('Receipt', 'The receipt the code belongs to.') },
      problems: [400, 404, 429, 500, 503],
    }),
    async (request) => ({
      object: 'receipt',
      ...publicReceiptFields(await verifyReceipt(deps, request.query.code)),
    }),
  );
}

export const receiptRoutes = routesInOrder(transferReceiptRoute, verifyReceiptRoute);
