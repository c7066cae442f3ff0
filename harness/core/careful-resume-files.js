// Where a testbed's servers write their Careful Resume logs: the QUIC PEP
// chain (pep/) and our origin name the file, servers/careful-resume-log.js
// reads it back into the record.
import path from 'node:path';

/** The Careful Resume log of `server` (origin, satbulk, gw) in testbed `tb`'s folder. */
export const carefulResumeLogPath = (tb, server = 'origin') => path.join(tb.dir, `careful-resume-${server}.log`);
