// Runs in the page: every resource the document loaded, with the protocol
// it came over.
export default function resources() {
  return performance.getEntriesByType('resource').map((e) => ({
    name: e.name,
    initiatorType: e.initiatorType,
    nextHopProtocol: e.nextHopProtocol,
    startTime: e.startTime,
    responseStart: e.responseStart,
    responseEnd: e.responseEnd,
    transferSize: e.transferSize,
    encodedBodySize: e.encodedBodySize,
    decodedBodySize: e.decodedBodySize,
    responseStatus: e.responseStatus,
  }));
}
