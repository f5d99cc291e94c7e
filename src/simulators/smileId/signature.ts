/**
 * The simulator signs and checks with the core's Smile ID signature (src/domain/smileIdSignature.ts), the
 * one the verification provider uses: the scheme of Smile ID's v1 APIs and of smile-identity-core.
 */
export {
  smileIdSignature,
  smileIdSignatureMatches,
  smileIdSigned as signedNow,
} from '../../domain/smileIdSignature.ts';
