/**
 * The result bodies Smile ID answers a lookup with (synchronously, in the callback, and as `result` in
 * /job_status): the top-level values (`ResultCode`, `ResultText`, `SmileJobID`, `PartnerParams`, ...), the
 * `Actions` that explain it, and the identity (KYC) or company (KYB) data returned when the ID was found.
 */
import type { SmileIdPartnerParams } from './state.ts';

/** Each result code the simulator gives: its text, whether the job passed, and whether data is returned. */
export const SMILE_ID_RESULT_CODES: Record<string, { text: string; success: boolean; found: boolean }> = {
  '1012': { text: 'Valid ID', success: true, found: true },
  '1013': { text: 'Unable to Validate ID', success: false, found: false },
  '1014': { text: 'Unsupported ID number format', success: false, found: false },
  '1015': { text: 'Error - Queried Database Unavailable', success: false, found: false },
  '1016': { text: 'Error - Need to Activate Product', success: false, found: false },
  '1020': { text: 'Exact Match', success: true, found: true },
  '1021': { text: 'Partial Match', success: true, found: true },
  '1022': { text: 'No Match', success: false, found: true },
};

/** The text the `Verify_ID_Number` action reports for a result code. */
function verifyAction(resultCode: string): string {
  if (resultCode === '1013' || resultCode === '1014') return 'Not Verified';
  if (resultCode === '1015') return 'Issuer Unavailable';
  if (resultCode === '1016') return 'Not Done';
  return 'Verified';
}

/** How the submitted names compare, by result code (1020 exact, 1021 partial, 1022 none). */
function namesAction(resultCode: string, namesGiven: boolean): string {
  if (!namesGiven) return 'Not Provided';
  return { '1020': 'Exact Match', '1021': 'Partial Match', '1022': 'No Match' }[resultCode] ?? 'Exact Match';
}

export interface LookupFacts {
  smileJobId: string;
  partnerParams: SmileIdPartnerParams;
  resultCode: string;
  country: string;
  idType: string;
  idNumber: string;
  body: Record<string, unknown>;
}

export function kycResult(facts: LookupFacts): Record<string, unknown> {
  const code = SMILE_ID_RESULT_CODES[facts.resultCode] ?? { text: 'Valid ID', success: true, found: true };
  const namesGiven = typeof facts.body.first_name === 'string' || typeof facts.body.last_name === 'string';
  const submittedName = [facts.body.first_name, facts.body.middle_name, facts.body.last_name]
    .filter((part) => typeof part === 'string' && part !== '')
    .join(' ');
  return {
    JSONVersion: '1.0.0',
    SmileJobID: facts.smileJobId,
    PartnerParams: facts.partnerParams,
    ResultType: 'ID Verification',
    ResultText: code.text,
    ResultCode: facts.resultCode,
    IsFinalResult: 'true',
    Actions: {
      Verify_ID_Number: verifyAction(facts.resultCode),
      Return_Personal_Info: code.found ? 'Returned' : 'Not Returned',
      Names: namesAction(facts.resultCode, namesGiven),
      DOB: typeof facts.body.dob === 'string' ? namesAction(facts.resultCode, true) : 'Not Provided',
    },
    Country: facts.country,
    IDType: facts.idType,
    IDNumber: facts.idNumber,
    ...(code.found
      ? {
          FullName: submittedName === '' ? 'Simulated Person' : submittedName,
          DOB: typeof facts.body.dob === 'string' ? facts.body.dob : '1990-01-01',
          Gender: 'Not Available',
          PhoneNumber:
            typeof facts.body.phone_number === 'string' ? facts.body.phone_number : 'Not Available',
          ExpirationDate: 'Not Available',
        }
      : {}),
  };
}

export function kybResult(facts: LookupFacts): Record<string, unknown> {
  const found = SMILE_ID_RESULT_CODES[facts.resultCode]?.found ?? true;
  const passed = SMILE_ID_RESULT_CODES[facts.resultCode]?.success ?? true;
  return {
    JSONVersion: '1.0.0',
    SmileJobID: facts.smileJobId,
    PartnerParams: facts.partnerParams,
    ResultType: 'Business Verification',
    ResultText: passed ? 'Business Verified' : (SMILE_ID_RESULT_CODES[facts.resultCode]?.text ?? ''),
    ResultCode: facts.resultCode,
    IsFinalResult: 'true',
    Actions: {
      Verify_Business: passed ? 'Verified' : verifyAction(facts.resultCode),
      Return_Business_Info: found ? 'Returned' : 'Not Returned',
    },
    ...(found
      ? {
          company_information: {
            company_type: facts.body.business_type ?? 'PRIVATE_COMPANY_LIMITED_BY_SHARES',
            country: facts.country,
            registration_number: facts.idNumber,
            search_number: facts.idNumber,
            legal_name: 'Simulated Business Limited',
            status: 'ACTIVE',
          },
          directors: [],
          beneficial_owners: [],
          fiduciaries: [],
        }
      : {}),
  };
}
