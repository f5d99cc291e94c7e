/** A page of a list: its size bounds, the request's cursor and what a page answers. */
export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 100;

export interface PageRequest {
  limit: number;
  startingAfter?: string | undefined;
  createdGte?: Date | undefined;
  createdLte?: Date | undefined;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** Repositories fetch limit + 1 rows; the extra row only says whether another page exists. */
export function toPage<T>(rows: T[], limit: number): Page<T> {
  return { data: rows.slice(0, limit), hasMore: rows.length > limit };
}
