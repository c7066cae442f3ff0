// The certificates of a run: `origin gen-cert` writes a key pair and a
// self-signed certificate for a name and an address into a folder. Our
// origin, satbulk and each QUIC PEP get their own; Chromium trusts them by
// the SPKI pin, the other clients by the certificate file.
import fs from 'node:fs';
import path from 'node:path';
import { binPath, run } from './sys.js';

/** Makes DIR/cert.pem, DIR/key.pem and DIR/spki.txt; returns their paths and the pin. */
export async function makeCertificate({ name, ip, dir }) {
  await run(binPath('origin'), ['gen-cert', '--name', name, '--ip', ip, '--out', dir]);
  return {
    dir,
    cert: path.join(dir, 'cert.pem'),
    key: path.join(dir, 'key.pem'),
    spki: fs.readFileSync(path.join(dir, 'spki.txt'), 'utf8').trim(),
  };
}
