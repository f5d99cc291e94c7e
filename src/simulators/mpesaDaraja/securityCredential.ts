/**
 * The simulator's stand-in for Safaricom's public certificate: a fixed RSA key pair whose certificate the
 * simulator publishes (GET DARAJA_SIMULATOR_CERTIFICATE_PATH), as Safaricom publishes its sandbox and
 * production certificates. A `SecurityCredential` is the initiator's password encrypted with that
 * certificate's public key (RSA, PKCS #1 v1.5 padding), base64; the simulator decrypts it to check the
 * password. The private key is a TEST key, public on purpose: it protects nothing.
 */
import { constants, privateDecrypt, publicEncrypt, X509Certificate } from 'node:crypto';

/** Where the simulator publishes its certificate (PEM). */
export const DARAJA_SIMULATOR_CERTIFICATE_PATH = '/certificates/sandbox.cer';

/** The simulator's certificate, self-signed, valid for a century; it is what a client encrypts with. */
export const DARAJA_SIMULATOR_CERTIFICATE_PEM = `-----BEGIN CERTIFICATE-----
MIIDkzCCAnugAwIBAgIUSjGXcrb8a8g7R07GcFWjjZnxb0gwDQYJKoZIhvcNAQEL
BQAwWDELMAkGA1UEBhMCS0UxDjAMBgNVBAoMBU1rb2JhMTkwNwYDVQQDDDBNa29i
YSBEYXJhamEgc2ltdWxhdG9yICh0ZXN0IGtleSwgbm90IFNhZmFyaWNvbSkwIBcN
MjYxMjA2MTg1NjI5WhgPMjEyNjExMTIxODU2MjlaMFgxCzAJBgNVBAYTAktFMQ4w
DAYDVQQKDAVNa29iYTE5MDcGA1UEAwwwTWtvYmEgRGFyYWphIHNpbXVsYXRvciAo
dGVzdCBrZXksIG5vdCBTYWZhcmljb20pMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A
MIIBCgKCAQEAmR0KbkDMpKeEso7eG9PHLH5kVjcqxU+1cl0api4btzl+pZKRm5Ko
aJe0MC441egUPLT+Et6ZmXjFec3lSHnEK4j+1LgeeEHf1nKx+pgdCunmXlmZPxWQ
L+QlWpgHNlw/28b1l2hp8V6oRb6/wRU3tjZPkHuIu874+Btmh5HrzPAzfUBBS6jo
UuF/3MhzwsYvx/DTyrw7sJgwMX0XL6xIUb7gaOnvz7Jn23cWKzKq0cFrd8ntJwut
IJxb38j5oc8XVZ61tHtgzszPnd9VVikL8y3zhKDG73FH0EEH4iuzbsbS6Sf80Gmz
wMyVZCVCAPYBrkxlEdKKhnhGUnxAoQ2wxwIDAQABo1MwUTAdBgNVHQ4EFgQUXdIC
jDBZ2M/ANjHAkovFroBSR7AwHwYDVR0jBBgwFoAUXdICjDBZ2M/ANjHAkovFroBS
R7AwDwYDVR0TAQH/BAUwAwEB/zANBgkqhkiG9w0BAQsFAAOCAQEAGKSU5FnjKRST
lLKt9xMCLTz1Ql6/Tcqtsg5CkeZT1ZBOYTbhKtyxOtu2bsSO+GI83gmEQDdulFVh
U8Z4NOfX9j/HGqVN6jOwNEF8njB5NDu9u+93jrCqBdkYRVX+czs71Hrr6iOtf5IB
RQvengD08zlPVJoCY37fYVEtQaa0hHxYhYgoXrMGPgaSLAjABfITgbj2eha/klbi
kBLArFUSc0fOHjxiFnfwFKfq1pss9tfC3tbyJIrgul0k/jrnOyrLK9KqTB0wUEox
k1zwu8R8EgA235iEwnSMHzYerRRYzXQ+WxEjTOyV7D3IRNY+GazcGGrFShYrox5E
Qm9EIky0aA==
-----END CERTIFICATE-----
`;

/** The certificate's private key. A test key: never use it for anything else. */
const SIMULATOR_PRIVATE_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQCZHQpuQMykp4Sy
jt4b08csfmRWNyrFT7VyXRqmLhu3OX6lkpGbkqhol7QwLjjV6BQ8tP4S3pmZeMV5
zeVIecQriP7UuB54Qd/WcrH6mB0K6eZeWZk/FZAv5CVamAc2XD/bxvWXaGnxXqhF
vr/BFTe2Nk+Qe4i7zvj4G2aHkevM8DN9QEFLqOhS4X/cyHPCxi/H8NPKvDuwmDAx
fRcvrEhRvuBo6e/PsmfbdxYrMqrRwWt3ye0nC60gnFvfyPmhzxdVnrW0e2DOzM+d
31VWKQvzLfOEoMbvcUfQQQfiK7NuxtLpJ/zQabPAzJVkJUIA9gGuTGUR0oqGeEZS
fEChDbDHAgMBAAECggEAPafml+ArKBC3DEogoZcFqOKal+cuJ3dCCzP3s7x0d7NE
zvq2/K0xeLDCI/aw9141q/58I3AU7SqnZrWlIyq5doh7iYA88NMiBlJ4Xf9cDpWC
qTKuVativQ5Dhngay2aZZnB3XAl1Q/eIjlFSGTfoj8zN/FHqjSo6snoiLuxxRjxB
3ihgMyYr/TIvMqCxjIGRNWVBpL0PannCzowzhe/OkK4r+uNj6/P7qzDylvd0nz+6
90S4p+2QRtWt7wwu1HgMYFFIAPyhN3tf03Gwl4HnyQKvmMy1nNj69zD8e4VEb6fu
4ViuYbr9FSuiOpHywFqwa7kTjdvk1AEYA9BoNC7q5QKBgQDR8y3VZzNDpfLnK96V
RF1nTH+myDHhIhtJmYVdEwj472eb1YguGAUyx1ojiCB3Djn/unHQ3pRObleo0J9D
wfWJIEfmHRXrlyuD/icm0oMEfhCPYr39ucJUG0FyVC0B/an1Y4DH/+mDoKmmRf84
yPjEu2rhtIMIFrU/Vjk+fQ2VGwKBgQC6snUcR87cpgETrOJSCLZmN4ZQEAWo3jlV
lVMAtx/PhcKDvVtlIgnIUfZLKM0cHLE0GQk1Kc5McOqyK2Amju9DBDvdYMRSUZ3g
uz/Mc0xnW2dtyhCMerr6PlQI42K4SArSdfoDFzufQd9gTP7HrLNsszs64h6+VULL
9YBUY9QJxQKBgF8xZp+y+jB7BubAIl0FsWAL9HkXnl4Yy8yUOj7YSaItUon6yJM1
uu2qK/meWDIDFlMYI1D0CsSBDWfyp7PeNsklBNSWbYDzevyO+QuGOXeI/VM2DzUC
y9S8wvDmr72OWUh1BEgqhaNz7lgAttb1cK4q2CxcX2kEesur+aqWotjvAoGAMHrK
wk87Pjy1JuDL3DV698wPSpb+gT1Dch/Wb+cdkYvQWNlA9GAEXko6RIYRzOz+buLZ
az6x3VOs/hsZWqnfI23kBbZtBFtBPewhwvtlqakokG/aIEB2cSjiNXSmW+gJN2F/
THIp/07hrGYR+tOzu9RG2yGAjjghokjbzA4oL2kCgYAtaXyyyTr6QzWSKGTV2wjc
U8NPreD4ILR29D71uIDUkbQbGBqZlbh1DzLDh/nRweht/Ys/v+35kREbyvZQjuj+
D3dXARNhdMWRlXtTpyaiCp/iJ/6HmyCsUN6sLiHnG1P3aOftJ8Jw3nQPxYpKSkZG
xzLVEAC4GW3njAHj6Vo+AA==
-----END PRIVATE KEY-----
`;

/** Whether a request's initiator name and SecurityCredential are the configured initiator's. */
export function initiatorValid(
  expected: { initiatorName: string; initiatorPassword: string },
  initiatorName: unknown,
  credential: unknown,
): boolean {
  return (
    initiatorName === expected.initiatorName &&
    typeof credential === 'string' &&
    decryptSecurityCredential(credential) === expected.initiatorPassword
  );
}

/** PKCS #1 v1.5 encryption padding: 0x00 0x02, at least this many non-zero random bytes, 0x00, the message. */
const PKCS1_MIN_PADDING_BYTES = 8;

/** A password encrypted as Daraja asks: RSA with PKCS #1 v1.5 padding under the certificate's key, base64. */
export function encryptSecurityCredential(password: string, certificatePem: string): string {
  const key = new X509Certificate(certificatePem).publicKey;
  return publicEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(password, 'utf8')).toString(
    'base64',
  );
}

/**
 * The password inside a SecurityCredential, or null when it is not one encrypted with the simulator's
 * certificate. Node 20 refuses PKCS #1 v1.5 private decryption (CVE-2023-46809, a timing oracle), so the
 * raw RSA result is unpadded here; a simulator's test key has no secret for that oracle to reveal.
 */
export function decryptSecurityCredential(credential: string): string | null {
  const bytes = Buffer.from(credential, 'base64');
  if (bytes.length === 0 || bytes.toString('base64') !== credential.replace(/\s/g, '')) return null;
  let block: Buffer;
  try {
    block = privateDecrypt({ key: SIMULATOR_PRIVATE_KEY_PEM, padding: constants.RSA_NO_PADDING }, bytes);
  } catch {
    return null;
  }
  if (block[0] !== 0x00 || block[1] !== 0x02) return null;
  const separator = block.indexOf(0x00, 2);
  if (separator < 2 + PKCS1_MIN_PADDING_BYTES) return null;
  return block.subarray(separator + 1).toString('utf8');
}
