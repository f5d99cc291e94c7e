/**
 * CSV read strictly as RFC 4180 §2 lays it out, byte by byte, for tests of what the service writes: every
 * record ends in CRLF (the last one too); a field is either bare (no comma, double quote, CR or LF in it) or
 * enclosed in double quotes with each double quote inside doubled. Anything else throws, naming the offset.
 */
export function rfc4180Records(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`not RFC 4180 at offset ${i}: ${what} (${JSON.stringify(text.slice(i, i + 20))})`);
  };
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) fail('a quoted field never closed');
        if (text[i] === '"') {
          if (text[i + 1] !== '"') break;
          field += '"';
          i += 2;
        } else {
          field += text[i];
          i++;
        }
      }
      i++;
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
        if (text[i] === '"') fail('a double quote in a bare field');
        if (text[i] === '\n') fail('a line feed that is not part of a CRLF');
        field += text[i];
        i++;
      }
    }
    record.push(field);
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
      continue;
    }
    fail(
      i >= text.length ? 'the last record does not end in CRLF' : 'a field followed by neither , nor CRLF',
    );
  }
  return records;
}

/** The records of a CSV with a header row, as objects keyed by the header (read by rfc4180Records). */
export function rfc4180Rows(text: string): Record<string, string>[] {
  const [header, ...records] = rfc4180Records(text);
  if (!header) throw new Error('no header record');
  return records.map((cells) => {
    if (cells.length !== header.length)
      throw new Error(`a record of ${cells.length} fields under ${header.length}`);
    return Object.fromEntries(header.map((name, i) => [name, cells[i] as string]));
  });
}
