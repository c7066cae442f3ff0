// Runs in the page: the whole Navigation Timing entry of the document.
export default function navigation() {
  const nav = performance.getEntriesByType('navigation')[0];
  return nav ? nav.toJSON() : null;
}
