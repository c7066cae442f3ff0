// What the QUIC PEPs' forward error correction did on the satellite hop
// (--pep-sat fec=K/N), from their stats: per direction, the repair packets
// the sending proxy added, the losses the receiving one rebuilt and those
// left, and the bytes the code cost.

/**
 * Pure: the record's `pep.fec` from both proxies' stats ({st, gw}, each
 * with quic-pep's `fec`), or null when neither coded. `down` is what
 * Proxy-GW sent towards the user, `up` what Proxy-ST sent back.
 */
export function fecRecord(stats) {
  const st = stats?.st?.fec;
  const gw = stats?.gw?.fec;
  if (!st && !gw) return null;
  const direction = (from, to) => {
    const sent = from?.sent ?? {};
    const got = to?.received ?? {};
    const cost = (sent.repair_bytes ?? 0) + (sent.source_header_bytes ?? 0);
    return {
      source_packets: sent.source_packets ?? 0,
      repair_packets: sent.repair_packets ?? 0,
      repaired: got.repaired ?? 0,
      lost: got.lost ?? 0,
      cost_bytes: cost,
      // FEC's bytes per byte it protected
      overhead: sent.source_bytes ? cost / sent.source_bytes : null,
    };
  };
  return { setting: (gw ?? st).setting, down: direction(gw, st), up: direction(st, gw) };
}
