"""A CONNECT-UDP (RFC 9298) client on aioquic's HTTP/3, an HTTP/3 stack we
did not write: it opens UDP proxying requests through Proxy-GW to a UDP echo
target, checks that every payload comes back on its own request (HTTP/3
Datagrams, RFC 9297, and a DATAGRAM capsule), and that what the RFCs say to
refuse is refused with their status.

Prints one JSON object: {"checks": [{"name", "ok", "got", "want"}, ...]};
exits 1 when any check failed, 2 when it could not run. Run by test/integration/masque-interop.test.js with the venv
harness/setup.sh makes (.tools/aioquic).

  connect_udp_client.py --proxy IP:PORT --name NAME --ca CERT.pem
                        --echo IP:PORT --forbidden IP:PORT
"""

import argparse
import asyncio
import json
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.buffer import encode_uint_var
from aioquic.h3.connection import H3_ALPN, H3Connection, Setting
from aioquic.h3.events import DataReceived, DatagramReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import StreamReset

TIMEOUT = 5.0
H3_MESSAGE_ERROR = 0x10E
TEMPLATE = "/.well-known/masque/udp/{host}/{port}/"


class Response:
    """What came back on one request stream."""

    def __init__(self):
        self.headers = None
        self.data = b""
        self.ended = False
        self.reset = None
        self.done = asyncio.Event()

    def status(self):
        return int(self.header(b":status")) if self.headers else None

    def header(self, name):
        values = [v for k, v in self.headers or [] if k == name]
        return values[0].decode() if values else None


class DatagramH3Connection(H3Connection):
    """aioquic 1.7.2 sends SETTINGS_H3_DATAGRAM only with WebTransport on;
    a UDP proxying client needs HTTP Datagrams without WebTransport, and a
    proxy MUST NOT send them to a client that did not send the setting
    (RFC 9297 §2.1.1)."""

    def _get_local_settings(self):
        settings = super()._get_local_settings()
        settings[Setting.H3_DATAGRAM] = 1
        return settings


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = DatagramH3Connection(self._quic)
        self.responses = {}
        self.datagrams = asyncio.Queue()

    def quic_event_received(self, event):
        if isinstance(event, StreamReset) and event.stream_id in self.responses:
            r = self.responses[event.stream_id]
            r.reset = event.error_code
            r.done.set()
        for e in self.h3.handle_event(event):
            if isinstance(e, DatagramReceived):
                self.datagrams.put_nowait((e.stream_id, e.data))
                continue
            r = self.responses.get(e.stream_id)
            if r is None:
                continue
            if isinstance(e, HeadersReceived) and r.headers is None:
                r.headers = e.headers
                r.done.set()
            elif isinstance(e, DataReceived):
                r.data += e.data
            if getattr(e, "stream_ended", False):
                r.ended = True
                r.done.set()

    async def request(self, headers, end_stream=False):
        """Sends a request head; returns its stream ID and the response (or
        reset) that came back."""
        sid = self._quic.get_next_available_stream_id()
        self.responses[sid] = r = Response()
        self.h3.send_headers(sid, headers, end_stream=end_stream)
        self.transmit()
        try:
            await asyncio.wait_for(r.done.wait(), TIMEOUT)
        except asyncio.TimeoutError:
            pass
        return sid, r

    async def wait_end(self, sid):
        r = self.responses[sid]
        while not (r.ended or r.reset is not None):
            r.done.clear()
            await asyncio.wait_for(r.done.wait(), TIMEOUT)
        return r

    def send_udp(self, sid, payload):
        # RFC 9298 §5: Context ID 0, then the UDP payload
        self.h3.send_datagram(sid, encode_uint_var(0) + payload)
        self.transmit()

    def send_capsule(self, sid, payload):
        # RFC 9297 §3.5: a DATAGRAM capsule (type 0) on the request stream
        value = encode_uint_var(0) + payload
        capsule = encode_uint_var(0) + encode_uint_var(len(value)) + value
        self.h3.send_data(sid, capsule, end_stream=False)
        self.transmit()

    async def next_udp(self, timeout=TIMEOUT):
        sid, data = await asyncio.wait_for(self.datagrams.get(), timeout)
        assert data[:1] == b"\x00", f"context {data[:1]!r}"
        return sid, data[1:]


class Checks:
    def __init__(self):
        self.all = []

    def add(self, name, ok, got, want):
        self.all.append({"name": name, "ok": bool(ok), "got": got, "want": want})


def connect_udp(authority, path, extra=()):
    return [
        (b":method", b"CONNECT"),
        (b":protocol", b"connect-udp"),
        (b":scheme", b"https"),
        (b":authority", authority.encode()),
        (b":path", path.encode()),
        (b"capsule-protocol", b"?1"),
        *extra,
    ]


def replace(headers, name, value):
    """`headers` with `name` set to `value` (None: without it)."""
    out = [(k, v) for k, v in headers if k != name]
    if value is not None:
        out.insert(1, (name, value))
    return out


async def proxying(c, checks, authority, echo):
    """Two requests on one connection, each to the echo target; datagrams
    each way by their Quarter Stream ID; a capsule; the client's end."""
    path = TEMPLATE.format(host=echo[0], port=echo[1])
    sids = []
    for n in (1, 2):
        sid, r = await c.request(connect_udp(authority, path))
        checks.add(
            f"request {n} to the echo target answered 200 with Capsule-Protocol ?1",
            r.status() == 200 and r.header(b"capsule-protocol") == "?1",
            {"stream": sid, "status": r.status(), "capsule-protocol": r.header(b"capsule-protocol"), "reset": r.reset},
            {"status": 200, "capsule-protocol": "?1"},
        )
        sids.append(sid)
    sent = {}
    for i, size in enumerate([0, 1, 50, 500, 1000] * 2):
        for sid in sids:
            payload = bytes([i, sid & 0xFF]) * (size // 2) + bytes(size % 2)
            c.send_udp(sid, payload)
            sent.setdefault(sid, []).append(payload)
    got = {sid: [] for sid in sids}
    try:
        while sum(map(len, got.values())) < sum(map(len, sent.values())):
            sid, payload = await c.next_udp()
            got.setdefault(sid, []).append(payload)
    except asyncio.TimeoutError:
        pass
    for sid in sids:
        checks.add(
            f"every UDP payload sent on stream {sid} came back on stream {sid}",
            sorted(got[sid]) == sorted(sent[sid]),
            {"echoed": len(got[sid]), "equal": sorted(got[sid]) == sorted(sent[sid])},
            {"echoed": len(sent[sid])},
        )
    c.send_capsule(sids[0], b"in a DATAGRAM capsule")
    try:
        back = await c.next_udp()
    except asyncio.TimeoutError:
        back = None
    checks.add(
        "a DATAGRAM capsule's payload was relayed and its echo came back as a datagram",
        back == (sids[0], b"in a DATAGRAM capsule"),
        repr(back),
        repr((sids[0], b"in a DATAGRAM capsule")),
    )
    # the client ends request 1: the proxy ends its side too
    c.h3.send_data(sids[0], b"", end_stream=True)
    c.transmit()
    try:
        r = await c.wait_end(sids[0])
        ended = {"fin": r.ended, "reset": r.reset}
    except asyncio.TimeoutError:
        ended = {"fin": False, "reset": None}
    checks.add("the proxy closed request 1 after the client's FIN", ended["fin"], ended, {"fin": True})
    c.send_udp(sids[1], b"still open")
    try:
        back = await c.next_udp()
    except asyncio.TimeoutError:
        back = None
    checks.add("request 2 still relays after request 1 ended", back == (sids[1], b"still open"), repr(back), "echo on stream 4")


async def refusals(c, checks, authority, echo, forbidden):
    ok_path = TEMPLATE.format(host=echo[0], port=echo[1])
    base = connect_udp(authority, ok_path)
    cases = [
        # RFC 9220 §3: a :protocol the server does not support: 501. h3 0.0.8
        # knows no connect-ip and resets such a request as malformed
        # (RFC 9114 §4.1.2, H3_MESSAGE_ERROR) before Proxy-GW sees it
        ("an unknown :protocol (connect-ip)", replace(base, b":protocol", b"connect-ip"), (501, H3_MESSAGE_ERROR)),
        ("an unsupported :protocol (webtransport)", replace(base, b":protocol", b"webtransport"), (501,)),
        (
            "CONNECT without :protocol (a TCP tunnel)",
            [(b":method", b"CONNECT"), (b":authority", f"{echo[0]}:{echo[1]}".encode())],
            (501,),
        ),
        ("GET on the template's path", replace(replace(base, b":protocol", None), b":method", b"GET"), (405,)),
        (":protocol with GET (RFC 9220: CONNECT only)", replace(base, b":method", b"GET"), (400,)),
        (":scheme http", replace(base, b":scheme", b"http"), (400,)),
        ("Capsule-Protocol sent twice", base + [(b"capsule-protocol", b"?1")], (400,)),
        ("Capsule-Protocol not a Boolean", replace(base, b"capsule-protocol", b"1"), (400,)),
        ("a path that is not the template's", replace(base, b":path", b"/index.html"), (404,)),
        ("target_port 0", replace(base, b":path", TEMPLATE.format(host=echo[0], port=0).encode()), (400,)),
        ("target_port 70000", replace(base, b":path", TEMPLATE.format(host=echo[0], port=70000).encode()), (400,)),
        ("no target_port", replace(base, b":path", f"/.well-known/masque/udp/{echo[0]}/".encode()), (400,)),
        (
            "an IPv6 target with its colons not percent-encoded",
            replace(base, b":path", TEMPLATE.format(host="2001:db8::42", port=443).encode()),
            (400,),
        ),
        (
            "a target the proxy does not allow",
            replace(base, b":path", TEMPLATE.format(host=forbidden[0], port=forbidden[1]).encode()),
            (403,),
        ),
    ]
    for name, headers, want in cases:
        sid, r = await c.request(headers)
        outcome = r.status() if r.status() is not None else r.reset
        got = {"status": r.status(), "reset": r.reset, "proxy-status": r.header(b"proxy-status"), "body": r.data.decode(errors="replace").strip()}
        ok = outcome in want and r.header(b"capsule-protocol") is None
        if 403 in want:
            ok = ok and "error=destination_ip_prohibited" in (r.header(b"proxy-status") or "")
        if 405 in want:
            ok = ok and r.header(b"allow") == "CONNECT"
        checks.add(f"refused: {name}", ok, got, {"status or reset": list(want)})


async def main(args):
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name=args.name, max_datagram_frame_size=65536)
    config.load_verify_locations(args.ca)
    host, port = args.proxy.rsplit(":", 1)
    echo = tuple(args.echo.rsplit(":", 1))
    forbidden = tuple(args.forbidden.rsplit(":", 1))
    checks = Checks()
    async with connect(host, int(port), configuration=config, create_protocol=Client) as c:
        authority = f"{args.name}:{port}"
        await proxying(c, checks, authority, echo)
        await refusals(c, checks, authority, echo, forbidden)
    return checks.all


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for flag in ("--proxy", "--name", "--ca", "--echo", "--forbidden"):
        parser.add_argument(flag, required=True)
    try:
        results = asyncio.run(main(parser.parse_args()))
    except Exception as e:  # noqa: BLE001 - one line saying why it could not run
        print(f"connect_udp_client: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"checks": results}, indent=1))
    sys.exit(0 if all(r["ok"] for r in results) else 1)
