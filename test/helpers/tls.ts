/**
 * A self-signed TLS certificate for loopback receivers, made with openssl:
 * subject `localhost`, alternative names `IP:127.0.0.1` and `DNS:localhost`,
 * valid for one day. The certificate is its own root, so a client trusts it
 * with `OTEL_EXPORTER_OTLP_CERTIFICATE=<cert>`.
 *
 * @module subagent-otel/test/helpers/tls
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate and its key: the PEM files and their bytes. */
export interface TlsIdentity {
  /** PEM file of the certificate (the value for `OTEL_EXPORTER_OTLP_CERTIFICATE`). */
  readonly cert: string;
  /** PEM file of the private key. */
  readonly key: string;
  readonly certPem: Buffer;
  readonly keyPem: Buffer;
}

/**
 * Writes `cert.pem` and `key.pem` into `dir` (which must exist).
 * @throws naming the package to install when openssl is missing or fails.
 */
export function selfSignedCertificate(dir: string): TlsIdentity {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'pipe' },
    );
  } catch (error) {
    throw new Error(
      `this test makes a certificate with openssl; install it (apt-get install openssl) (${String(error)})`,
    );
  }
  return { cert, key, certPem: readFileSync(cert), keyPem: readFileSync(key) };
}
