// What to undo when the process is interrupted. Commands register the
// teardown of what they build; SIGINT and SIGTERM run every registered
// teardown (newest first) before the process exits, so Ctrl-C leaves no
// namespace or process behind.
const pending = new Set();
let installed = false;
let exiting = false;

async function runAll() {
  for (const fn of [...pending].reverse()) {
    pending.delete(fn);
    try {
      await fn();
    } catch (e) {
      process.stderr.write(`satbench: teardown failed: ${e.message}\n`);
    }
  }
}

function onSignal(signal) {
  if (exiting) return; // a second Ctrl-C while tearing down: keep tearing down
  exiting = true;
  process.stderr.write(`satbench: ${signal}, tearing down what this run built\n`);
  runAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
}

export function onTeardown(fn) {
  if (!installed) {
    installed = true;
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('SIGHUP', onSignal);
  }
  pending.add(fn);
  return () => pending.delete(fn);
}
