import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PkiPaths {
  readonly caCert: string;
  readonly caKey: string;
  readonly apiserverCert: string;
  readonly apiserverKey: string;
  /** ServiceAccount token signing key pair. */
  readonly saKey: string;
  readonly saPub: string;
}

export class PkiError extends Error {
  override readonly name = 'PkiError';
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
const SERVING_EXTENSIONS =
  'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n';

/** A fresh CA, an apiserver serving certificate for loopback, and a ServiceAccount key pair. */
export async function createPki(dir: string): Promise<PkiPaths> {
  const file = (name: string): string => path.join(dir, name);
  const paths: PkiPaths = {
    caCert: file('ca.crt'),
    caKey: file('ca.key'),
    apiserverCert: file('apiserver.crt'),
    apiserverKey: file('apiserver.key'),
    saKey: file('sa.key'),
    saPub: file('sa.pub'),
  };
  const extensions = file('apiserver.ext');
  await writeFile(extensions, SERVING_EXTENSIONS);
  const steps: readonly (readonly string[])[] = [
    [
      'req',
      '-x509',
      ...EC_KEY,
      '-days',
      '30',
      '-subj',
      '/CN=kreload-e2e-ca',
      '-keyout',
      paths.caKey,
      '-out',
      paths.caCert,
    ],
    [
      'req',
      ...EC_KEY,
      '-subj',
      '/CN=kube-apiserver',
      '-keyout',
      paths.apiserverKey,
      '-out',
      file('apiserver.csr'),
    ],
    [
      'x509',
      '-req',
      '-in',
      file('apiserver.csr'),
      '-CA',
      paths.caCert,
      '-CAkey',
      paths.caKey,
      '-CAcreateserial',
      '-days',
      '30',
      '-out',
      paths.apiserverCert,
      '-extfile',
      extensions,
    ],
    ['genrsa', '-out', paths.saKey, '2048'],
    ['rsa', '-in', paths.saKey, '-pubout', '-out', paths.saPub],
  ];
  for (const args of steps) {
    try {
      await run('openssl', args, { cwd: dir });
    } catch (error) {
      throw new PkiError(`openssl ${args.join(' ')} failed`, { cause: error });
    }
  }
  return paths;
}
