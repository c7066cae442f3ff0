// Running the system's commands (ip, tc, sysctl, …) with errors that say
// which command failed and what it printed.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from './errors.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function run(cmd, args, { allowFail = false, input, timeoutMs = 30000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && !allowFail) {
        const why = err.code === 'ENOENT' ? `${cmd} is not installed` : stderr.trim() || err.message;
        // the exit status, or the signal that ended it (a timeout kills it)
        const status = typeof err.code === 'number' ? ` with status ${err.code}` : err.signal ? ` (${err.signal})` : '';
        reject(new Error(`\`${cmd} ${args.join(' ')}\` failed${status}: ${why}`));
      } else {
        resolve({ ok: !err, code: err ? err.code : 0, stdout, stderr });
      }
    });
    if (input !== undefined) child.stdin.end(input);
  });
}

// A binary of the Rust workspace, built by `cargo build --release`.
export function binPath(name) {
  const p = path.join(process.env.SATBENCH_BIN_DIR || path.join(ROOT, 'target/release'), name);
  if (!fs.existsSync(p)) {
    throw new UsageError(
      `${p} is missing: build the Rust workspace with \`cargo build --release\` (npm test and npm run bench do it)`,
    );
  }
  return p;
}

// Root, or at least CAP_NET_ADMIN (bit 12 of the effective set).
// The capability, not the uid, is what namespaces need: root without
// CAP_NET_ADMIN (a container, `setpriv --bounding-set -net_admin`) cannot.
export function hasNetAdmin() {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(status);
  return m ? (BigInt('0x' + m[1]) & (1n << 12n)) !== 0n : false;
}

export function requireNetAdmin(command) {
  if (!hasNetAdmin()) {
    throw new UsageError(
      `${command} builds network namespaces and needs root (or CAP_NET_ADMIN): run it as root, e.g. \`sudo npx satbench ${command}\``,
    );
  }
}

/**
 * Starts a long-running helper (linkem, the origin, …) detached in its own
 * process group, stderr to `logPath`, and waits for it to print "ready".
 * A program that cannot be taught to say so (H2O) is ready when its log
 * matches `readyInLog` instead. Returns the child, no longer holding our
 * event loop open.
 */
export function spawnReady(cmd, args, { logPath, what, timeoutMs = 10000, onSpawn = () => {}, readyInLog }) {
  const log = fs.openSync(logPath, 'a');
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'pipe', log] });
  fs.closeSync(log);
  onSpawn(child);
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => fail(`did not report ready within ${timeoutMs / 1000} s`), timeoutMs);
    function fail(why) {
      clearTimeout(timer);
      clearInterval(poll);
      const tail = fs.readFileSync(logPath, 'utf8').trim().split('\n').slice(-5).join(' | ');
      reject(new Error(`${what} ${why}${tail ? `: ${tail}` : ''}`));
    }
    function ready() {
      clearTimeout(timer);
      clearInterval(poll);
      child.removeAllListeners('exit');
      child.stdout.destroy();
      child.unref();
      resolve(child);
    }
    const poll =
      readyInLog &&
      setInterval(() => {
        if (readyInLog.test(fs.readFileSync(logPath, 'utf8'))) ready();
      }, 25);
    child.on('error', (e) => fail(`could not start: ${e.message}`));
    child.on('exit', (code) => fail(`exited with code ${code}`));
    child.stdout.on('data', (d) => {
      buf += d;
      if (!readyInLog && buf.includes('ready\n')) ready();
    });
  });
}

// The absolute path of a command on PATH (puppeteer wants one).
export function which(cmd) {
  for (const dir of (process.env.PATH || '').split(':').concat(['/usr/sbin', '/sbin'])) {
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  throw new UsageError(`${cmd} is not installed (not found on PATH)`);
}
