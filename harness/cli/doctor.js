// `satbench doctor`: every prerequisite, whether it is there, and what to
// do about each one that is not.
import fs from 'node:fs';
import path from 'node:path';
import { run, hasNetAdmin, ROOT } from '../core/sys.js';
import { kernelHasNetem, hasTun } from '../testbed/link-backends.js';
import { readHostChanges, ALLOWED_CC } from '../testbed/host-settings.js';
import { chromePath } from '../browser/chromium.js';
import { H2O_BUILT } from '../servers/origin.js';
import { terminalSafe } from '../core/terminal.js';
import { parse, print, note, noOperands } from './args.js';

export const HELP = `Usage: satbench doctor [--json]
  Check root or CAP_NET_ADMIN, ip netns, /dev/net/tun, tc, nftables, iperf3, ethtool, OpenVPN,
  Chromium and its version, the Rust binaries, TCP congestion controls and kernel netem.
  Exit 0 when everything required is there, 1 otherwise.

Options:
  --json   print every check as JSON`;

const MIN_NODE = [22, 19];
export const RUST_BINARIES = ['linkem', 'satprobe'];

async function version(cmd, args, pattern = /(\d+\.\d+(?:\.\d+)*)/) {
  const r = await run(cmd, args, { allowFail: true, timeoutMs: 20000 });
  if (!r.ok) return null;
  const m = pattern.exec(r.stdout + r.stderr);
  return m ? m[1] : r.stdout.trim() || 'present';
}

// Pure: whether a Node version string meets the minimum.
export function nodeIsNewEnough(v, min = MIN_NODE) {
  const [major, minor] = v.replace(/^v/, '').split('.').map(Number);
  return major > min[0] || (major === min[0] && minor >= min[1]);
}

// Pure: the check of the host settings satbench changed (host-settings.js's
// record): a note, since a run needs nothing put back.
export function hostSettingsCheck(changes) {
  const cc = changes?.[ALLOWED_CC];
  return {
    name: 'host settings',
    ok: !cc,
    required: false,
    detail: cc
      ? `${ALLOWED_CC}: satbench added ${cc.added.join(', ')} (was: ${cc.was}) because ${cc.why}`
      : 'none changed by satbench',
    fix: cc
      ? 'satbench puts it back when it ends; after a killed run (or while another satbench runs) `satbench cleanup` does'
      : null,
  };
}

export async function checks() {
  const root = hasNetAdmin();
  const out = [];
  const add = (name, ok, detail, fix, required = true) =>
    out.push({ name, ok, required, detail, fix: ok ? null : fix });

  add(
    'privileges',
    root,
    root ? (process.getuid() === 0 ? 'root' : 'CAP_NET_ADMIN') : 'neither root nor CAP_NET_ADMIN',
    'run satbench as root (sudo), which it needs for network namespaces',
  );
  add(
    'node',
    nodeIsNewEnough(process.version),
    `Node.js ${process.version}`,
    `Node.js >= ${MIN_NODE.join('.')} is needed by puppeteer-core and Lighthouse; npm test / npm run bench install Node 24 into .tools/node`,
  );
  const ipVer = await version('ip', ['-V'], /iproute2-([\d.]+\d)/);
  const netns = ipVer ? (await run('ip', ['netns', 'list'], { allowFail: true })).ok : false;
  add('ip netns', netns, ipVer ? `iproute2 ${ipVer}` : 'ip not found', 'apt-get install iproute2');
  add(
    '/dev/net/tun',
    hasTun(),
    hasTun() ? 'present' : 'missing',
    'modprobe tun; in a container, pass /dev/net/tun in (needed by the linkem link emulator)',
  );
  const tc = await version('tc', ['-V'], /iproute2-([\d.]+\d)/);
  add('tc', Boolean(tc), tc ? `tc ${tc}` : 'not found', 'apt-get install iproute2');
  const nft = await version('nft', ['--version']);
  add(
    'nftables',
    Boolean(nft),
    nft ? `nft ${nft}` : 'not found',
    'apt-get install nftables (the split-TCP PEP steers connections with it)',
  );
  const iperf = await version('iperf3', ['--version']);
  add('iperf3', Boolean(iperf), iperf ? `iperf3 ${iperf}` : 'not found', 'apt-get install iperf3 (TCP bulk transfers)');
  const ethtool = await version('ethtool', ['--version']);
  add(
    'ethtool',
    Boolean(ethtool),
    ethtool ? `ethtool ${ethtool}` : 'not found',
    'apt-get install ethtool (turns offloads off for the kernel netem backend)',
  );
  const openvpn = await version('openvpn', ['--version']);
  add(
    'openvpn',
    Boolean(openvpn),
    openvpn ? `OpenVPN ${openvpn}` : 'not found',
    'apt-get install openvpn (the -vpn protocols tunnel the satellite hop with it)',
  );
  const chrome = chromePath();
  const chromeVer = fs.existsSync(chrome) ? await version(chrome, ['--version', '--no-sandbox']) : null;
  add(
    'chromium',
    Boolean(chromeVer),
    chromeVer ? `${chrome}: Chromium ${chromeVer}` : `${chrome} not found`,
    'apt-get install chromium, or set CHROME_PATH to a Chromium binary',
  );
  const h2o = fs.existsSync(H2O_BUILT) ? await version(H2O_BUILT, ['--version'], /version (\S+)/) : null;
  add(
    'h2o with HTTP/3',
    Boolean(h2o),
    h2o ? `${H2O_BUILT}: H2O ${h2o}` : `${H2O_BUILT} missing: --origin h2o is Debian's 2.2.5 (no h3)`,
    'optional: npm test / npm run bench build it from GitHub, or from the tarball SATBENCH_H2O_SOURCE names (README)',
    false,
  );
  const cc = fs.readFileSync('/proc/sys/net/ipv4/tcp_available_congestion_control', 'utf8').trim();
  add(
    'tcp congestion control',
    /\bcubic\b/.test(cc) && /\breno\b/.test(cc),
    `available: ${cc}`,
    'the kernel needs cubic and reno (modprobe tcp_bbr for bbr)',
  );
  for (const bin of RUST_BINARIES) {
    const p = path.join(ROOT, 'target/release', bin);
    add(
      `binary ${bin}`,
      fs.existsSync(p),
      fs.existsSync(p) ? p : `${p} missing`,
      'cargo build --release (npm test and npm run bench do it)',
    );
  }
  if (root) {
    const netem = await kernelHasNetem();
    add(
      'kernel netem',
      netem,
      netem ? 'sch_netem available: --link auto uses it' : 'no sch_netem: --link auto uses the linkem emulator',
      'optional: modprobe sch_netem where the kernel has it; linkem works without it',
      false,
    );
  } else {
    add('kernel netem', false, 'not checked (needs root)', 'run satbench doctor as root', false);
  }
  out.push(hostSettingsCheck(readHostChanges()));
  return out;
}

export function formatChecks(list) {
  const w = Math.max(...list.map((c) => c.name.length));
  return list
    .map((c) => {
      const mark = c.ok ? 'ok  ' : c.required ? 'FAIL' : 'note';
      return `${mark}  ${c.name.padEnd(w)}  ${terminalSafe(c.detail)}${c.fix ? `\n      ${' '.repeat(w)}  → ${c.fix}` : ''}`;
    })
    .join('\n');
}

export async function doctorCommand(argv) {
  const { values: v, positionals } = parse(argv, {});
  if (v.help) return note(HELP);
  noOperands(positionals, 'doctor');
  const list = await checks();
  if (v.json) print(list);
  else process.stdout.write(formatChecks(list) + '\n');
  process.exitCode = list.every((c) => c.ok || !c.required) ? 0 : 1;
}
