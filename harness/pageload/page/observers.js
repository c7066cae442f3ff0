// Runs in the page, installed before the document's own scripts
// (evaluateOnNewDocument): the page's layout shifts and long tasks as its
// own observers see them (long tasks are not buffered, so an observer
// started after the load would miss them), and when the page last changed
// (a layout shift, a new largest-contentful-paint candidate), for the wait
// after the load. Kept under `key` on the window, out of the page's sight
// (not enumerable).
export default function observe(key) {
  if (window[key]) return;
  const seen = { layoutShifts: [], longTasks: [], lastChange: 0 };
  Object.defineProperty(window, key, { value: seen, enumerable: false });
  const watch = (type, keep) => {
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) keep?.(e);
        seen.lastChange = performance.now();
      }).observe({ type, buffered: true });
    } catch {
      // an entry type this browser lacks: nothing of it is kept
    }
  };
  watch('layout-shift', (e) =>
    seen.layoutShifts.push({ startTime: e.startTime, value: e.value, hadRecentInput: e.hadRecentInput }),
  );
  watch('longtask', (e) => seen.longTasks.push({ startTime: e.startTime, duration: e.duration, name: e.name }));
  watch('largest-contentful-paint');
}

// Runs in the page: what `observe` kept so far, and the page's clock now.
export function observed(key) {
  const seen = window[key];
  return seen ? { ...seen, now: performance.now() } : null;
}
