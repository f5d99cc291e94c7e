/**
 * The Smile ID simulator's TLS identity: a fixed self-signed certificate for 127.0.0.1, ::1 and localhost,
 * valid for a century, so a client that only speaks HTTPS (smile-identity-core rewrites every base URL to
 * https://) reaches the simulator once it trusts this certificate. A test key: never use it for anything else.
 */

/** The certificate a client trusts to reach the simulator over HTTPS. */
export const SMILE_ID_SIMULATOR_CERTIFICATE_PEM = `-----BEGIN CERTIFICATE-----
MIIBwDCCAWagAwIBAgIUXFVePpK/IYzNO6aiyhFTZhbcZf8wCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSc21pbGUtaWQtc2ltdWxhdG9yMCAXDTI2MTIwNjIxMjcyOVoY
DzIxMjYxMTEyMjEyNzI5WjAdMRswGQYDVQQDDBJzbWlsZS1pZC1zaW11bGF0b3Iw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAS/j/ymuhoktuZgI644kaKfuX1jTM3A
8VgNI/SSDp9R6ww0iyteovp3SG4jfZPnn5kPo2u6/FUaX93/1W1WuP3uo4GBMH8w
HQYDVR0OBBYEFELbn/Rl7p6UM1Jnz3WKMMFZdmV1MB8GA1UdIwQYMBaAFELbn/Rl
7p6UM1Jnz3WKMMFZdmV1MA8GA1UdEwEB/wQFMAMBAf8wLAYDVR0RBCUwI4cEfwAA
AYIJbG9jYWxob3N0hxAAAAAAAAAAAAAAAAAAAAABMAoGCCqGSM49BAMCA0gAMEUC
IQDnHIZbR1XzJu/qE8NGM/9/7AqW7cT5YwidIa2UDPsP7QIgXwz+5f4+f15Mix2H
yvHOkoMcgTcp14O4RJB7m77gGoA=
-----END CERTIFICATE-----
`;

/** The certificate's private key. */
export const SMILE_ID_SIMULATOR_PRIVATE_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg5r/3pn+hqSGoDfK9
n+PciXkugHLJUQUJGwWM7MiiiK+hRANCAAS/j/ymuhoktuZgI644kaKfuX1jTM3A
8VgNI/SSDp9R6ww0iyteovp3SG4jfZPnn5kPo2u6/FUaX93/1W1WuP3u
-----END PRIVATE KEY-----
`;
