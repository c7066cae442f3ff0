// Runs in the page: paint entries (first-paint, first-contentful-paint)
// and the last largest-contentful-paint candidate seen so far.
export default function paint() {
  return new Promise((resolve) => {
    const paints = performance.getEntriesByType('paint').map((e) => e.toJSON());
    let lcp = null;
    const observer = new PerformanceObserver((list) => {
      const entries = list.getEntries();
      const last = entries[entries.length - 1];
      if (last) lcp = { startTime: last.startTime, size: last.size, url: last.url, element: last.element ? last.element.tagName : null };
    });
    try {
      observer.observe({ type: 'largest-contentful-paint', buffered: true });
    } catch {
      // no LCP support: leave it null
    }
    // Buffered entries are delivered asynchronously; one frame is enough.
    requestAnimationFrame(() => setTimeout(() => {
      observer.disconnect();
      resolve({ paints, lcp });
    }, 0));
  });
}
