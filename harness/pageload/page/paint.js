// Runs in the page: paint entries (first-paint, first-contentful-paint)
// and the last largest-contentful-paint candidate. A fast page can reach
// its load event before it first paints, so this waits for first
// contentful paint (up to `maxWaitMs`), then a moment for LCP to settle.
export default function paint(maxWaitMs = 10000) {
  return new Promise((resolve) => {
    let lcp = null;
    let done = false;
    const lcpObserver = new PerformanceObserver((list) => {
      const last = list.getEntries().at(-1);
      if (last)
        lcp = {
          startTime: last.startTime,
          size: last.size,
          url: last.url,
          element: last.element ? last.element.tagName : null,
        };
    });
    const paintObserver = new PerformanceObserver((list) => {
      if (list.getEntries().some((e) => e.name === 'first-contentful-paint')) settle();
    });
    function finish() {
      if (done) return;
      done = true;
      lcpObserver.disconnect();
      paintObserver.disconnect();
      resolve({ paints: performance.getEntriesByType('paint').map((e) => e.toJSON()), lcp });
    }
    function settle() {
      requestAnimationFrame(() => setTimeout(finish, 50));
    }
    try {
      lcpObserver.observe({ type: 'largest-contentful-paint', buffered: true });
    } catch {
      // no LCP support: leave it null
    }
    paintObserver.observe({ type: 'paint', buffered: true });
    setTimeout(finish, maxWaitMs);
  });
}
