// Waiting that an AbortSignal ends: what a run waits on (a step, a browser
// call) must not hold it once the run is aborted, whether or not the awaited
// code itself watches the signal.

/**
 * `promise`, or a rejection with `signal`'s reason as soon as it aborts.
 * What the promise resolves to after that is handed to `late` (a browser
 * launched too late, to kill); its rejection then is nobody's concern.
 */
export function unlessAborted(promise, signal, late = () => {}) {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) late(v);
        else resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        if (!signal.aborted) reject(e);
      },
    );
  });
}

/**
 * Whether `promise` settled within `ms` (true) or not (false); it is not
 * waited for past that. Never rejects.
 */
export function settlesWithin(promise, ms) {
  let timer;
  const late = new Promise((r) => (timer = setTimeout(() => r(false), ms)));
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}
