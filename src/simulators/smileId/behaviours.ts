/**
 * The simulator's magic ID numbers: the last four characters of a well-formed `id_number` (or a business's
 * registration number; a Ghana Card's are those before its check character, `GHA-123451021-1` ends 1021)
 * choose the result, as Smile ID's sandbox answers from its test data. Any other
 * number is found and valid (1012). A number that does not have its ID type's format is 1014 whatever it
 * ends with.
 */

export type SmileIdCallbackBehaviour = 'once' | 'late' | 'none' | 'twice';

export interface SmileIdBehaviour {
  resultCode: string;
  /** How an async job's callback is sent. */
  callback: SmileIdCallbackBehaviour;
  /** The job never completes: /job_status keeps answering `job_complete: false`. */
  neverCompletes?: boolean;
}

/** Result codes by the id number's last four characters; the code itself, where one is meant. */
export const SMILE_ID_SIMULATOR_ID_NUMBER_SUFFIXES: Record<string, SmileIdBehaviour> = {
  '1013': { resultCode: '1013', callback: 'once' }, // not found at the ID authority
  '1015': { resultCode: '1015', callback: 'once' }, // the ID authority is unavailable
  '1016': { resultCode: '1016', callback: 'once' }, // the ID type is not activated for the partner
  '1020': { resultCode: '1020', callback: 'once' }, // exact match of the submitted details
  '1021': { resultCode: '1021', callback: 'once' }, // partial match
  '1022': { resultCode: '1022', callback: 'once' }, // no match
  '9001': { resultCode: '1012', callback: 'late' }, // valid; the callback comes after the late delay
  '9002': { resultCode: '1012', callback: 'none' }, // valid; no callback ever: only /job_status tells
  '9003': { resultCode: '1012', callback: 'twice' }, // valid; the same callback is sent twice
  '9004': { resultCode: '1012', callback: 'none', neverCompletes: true }, // stays in progress
};

const VALID: SmileIdBehaviour = { resultCode: '1012', callback: 'once' };

export function behaviourOf(idNumber: string): SmileIdBehaviour {
  const withoutCheckCharacter = idNumber.replace(/-[A-Z0-9]$/i, '');
  return SMILE_ID_SIMULATOR_ID_NUMBER_SUFFIXES[withoutCheckCharacter.slice(-4)] ?? VALID;
}
