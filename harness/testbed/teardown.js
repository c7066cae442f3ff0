// What happens when satbench is interrupted (SIGINT, SIGTERM, SIGHUP).
// Commands register the teardown of what they build (onTeardown). A first
// signal aborts `interruption`, which the running code watches:
// - a campaign (bench, bulk) has called endOnItsOwn(): it records the run
//   in progress as interrupted, tears its testbed down, writes its outputs
//   and exits with exitCodeOf(signal) by itself (GRACE_MS at most, then
//   the registered teardowns run and the process exits);
// - any other command (testbed probe, up) runs every registered teardown,
//   newest first, and exits with exitCodeOf(signal).
// A second signal exits at once; `satbench cleanup` removes what is left.
// The handlers are process-wide: a command installs them as it starts
// (cli.js, a benchmark's main) and uninstalls them as it ends, so that
// importing or calling a module (a test does) never changes what a signal
// does to the process.
const pending = new Set();
const controller = new AbortController();
let installed = false;
let onItsOwn = false;
const GRACE_MS = 60000;

// Pure: the exit status of a command ended by `signal` (128 + its number).
export function exitCodeOf(signal) {
  return { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 }[signal] ?? 1;
}

/** What a run ends with when a signal interrupts it. */
export class Interrupted extends Error {
  constructor(signal) {
    super(`interrupted by ${signal}`);
    this.name = 'Interrupted';
    this.signal = signal;
  }
}

/** Aborted (with an Interrupted) by the first signal. */
export const interruption = controller.signal;

/** The signal that interrupted this process, or null. */
export const interruptedBy = () => (interruption.aborted ? interruption.reason.signal : null);

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

function teardownAndExit(signal) {
  runAll().finally(() => process.exit(exitCodeOf(signal)));
}

function onSignal(signal) {
  if (interruption.aborted) {
    process.stderr.write(
      `satbench: second signal (${signal}): exiting now; \`satbench cleanup\` removes what is left\n`,
    );
    process.exit(exitCodeOf(interruptedBy()));
  }
  controller.abort(new Interrupted(signal));
  if (onItsOwn) {
    process.stderr.write(
      `satbench: ${signal}: recording the run in progress as interrupted, tearing down and writing the results (a second signal exits at once)\n`,
    );
    // Should a step of the run never settle, the process would end with
    // status 0 once nothing else is left to do: it must still say so.
    process.once('beforeExit', () => {
      if (process.exitCode) return;
      process.stderr.write(`satbench: ended before the interrupted campaign finished\n`);
      process.exitCode = exitCodeOf(signal);
    });
    setTimeout(() => {
      process.stderr.write(`satbench: still not done ${GRACE_MS / 1000} s after ${signal}: tearing down and exiting\n`);
      teardownAndExit(signal);
    }, GRACE_MS).unref();
    return;
  }
  process.stderr.write(`satbench: ${signal}, tearing down what this run built\n`);
  teardownAndExit(signal);
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Installs satbench's handlers of SIGINT, SIGTERM and SIGHUP for the
 * command that starts now; returns the function that uninstalls them.
 */
export function installSignalHandlers() {
  if (installed) return () => {};
  installed = true;
  for (const s of SIGNALS) process.on(s, onSignal);
  return () => {
    for (const s of SIGNALS) process.off(s, onSignal);
    installed = false;
    onItsOwn = false;
  };
}

/**
 * From now on a first signal does not end the process: the command (a
 * campaign) watches `interruption`, ends on its own and sets its exit
 * status from interruptedBy(). Only once the command installed the
 * handlers does a signal reach it.
 */
export function endOnItsOwn() {
  onItsOwn = true;
}

// What a first signal tears down (see above), newest first; returns the
// function that unregisters `fn`.
export function onTeardown(fn) {
  pending.add(fn);
  return () => pending.delete(fn);
}
