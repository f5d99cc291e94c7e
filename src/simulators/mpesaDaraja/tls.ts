/**
 * The Daraja simulator's TLS identity (its HTTPS mode): a fixed self-signed certificate valid for a century
 * whose names are Safaricom's two API hosts (sandbox.safaricom.co.ke, api.safaricom.co.ke) and this machine
 * (localhost, 127.0.0.1, ::1). A client that can only reach Safaricom's fixed hosts reaches the simulator once
 * its process trusts this certificate and resolves the host to the simulator, as a hosts-file entry would
 * (test/rails-mpesa-daraja-client.test.ts). Not the certificate a SecurityCredential is encrypted with
 * (securityCredential.ts). A test key: never use it for anything else.
 */

/** Safaricom's sandbox API host, as third-party clients hard-code it. */
export const DARAJA_SANDBOX_HOST = 'sandbox.safaricom.co.ke';

/** The certificate a client trusts to reach the simulator over HTTPS. */
export const DARAJA_SIMULATOR_TLS_CERTIFICATE_PEM = `-----BEGIN CERTIFICATE-----
MIIB6zCCAZGgAwIBAgIUWcGn3diJog/aRkKAVknccMZXmeIwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQZGFyYWphLXNpbXVsYXRvcjAgFw0yNjEyMDYyMjI4NTJaGA8y
MTI2MTExMjIyMjg1MlowGzEZMBcGA1UEAwwQZGFyYWphLXNpbXVsYXRvcjBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABMAylHDtNkNbxIQpnuognM37VX/wb7oSHYVz
Ynoi86YWiEP6qfMt80z4g5R4ZjnMG6OZKeZVZmYj+Ew8+TPcPq2jgbAwga0wHQYD
VR0OBBYEFB5IPqrE5GbzpkvG7+FSuI7EXlCcMB8GA1UdIwQYMBaAFB5IPqrE5Gbz
pkvG7+FSuI7EXlCcMFoGA1UdEQRTMFGCF3NhbmRib3guc2FmYXJpY29tLmNvLmtl
ghNhcGkuc2FmYXJpY29tLmNvLmtlgglsb2NhbGhvc3SHBH8AAAGHEAAAAAAAAAAA
AAAAAAAAAAEwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiA9ERea
4hK9fRhyINelFlewAlLTVac5lVqbucQJtFSWPQIhAOUgEFfM1KhQEoqLFILQ6UOw
rRLWrOKE0lb7vROGz3US
-----END CERTIFICATE-----
`;

/** The certificate's private key. */
export const DARAJA_SIMULATOR_TLS_PRIVATE_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg82yX8+nlNDhd15XO
WEk5viic06I8Ylr8Kl1GV7boSyShRANCAATAMpRw7TZDW8SEKZ7qIJzN+1V/8G+6
Eh2Fc2J6IvOmFohD+qnzLfNM+IOUeGY5zBujmSnmVWZmI/hMPPkz3D6t
-----END PRIVATE KEY-----
`;
