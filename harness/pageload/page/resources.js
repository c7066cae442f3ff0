// Runs in the page: every resource the document loaded, with the protocol
// it came over and its DNS, connect and TLS times (zero where the
// connection was reused).
export default function resources() {
  return performance.getEntriesByType('resource').map((e) => ({
    name: e.name,
    initiatorType: e.initiatorType,
    nextHopProtocol: e.nextHopProtocol,
    startTime: e.startTime,
    domainLookupStart: e.domainLookupStart,
    domainLookupEnd: e.domainLookupEnd,
    connectStart: e.connectStart,
    secureConnectionStart: e.secureConnectionStart,
    connectEnd: e.connectEnd,
    responseStart: e.responseStart,
    responseEnd: e.responseEnd,
    transferSize: e.transferSize,
    encodedBodySize: e.encodedBodySize,
    decodedBodySize: e.decodedBodySize,
    responseStatus: e.responseStatus,
  }));
}
