#!/usr/bin/env python3
"""A scripted misbehaving php-via server, for hammer's robustness tests.

It speaks enough of php-via's protocol (docs/php-via-protocol.md; the page,
SSE and action bytes are bench_app's) that hammer gets to the point where a
misbehaviour matters: a page with the <meta data-signals> tag and
@post('/_action/increment'), the via_session_id cookie, a chunked
text/event-stream on /_sse with datastar-patch-signals events, empty 200
answers to actions, and /_health (which counts every context it ever made, as
a server that keeps contexts after their clients left; --health-grow adds
contexts no client made). Cookie ownership is enforced as php-via
does (an action or stream without the context's session gets 403), so a
client that loses its cookie is noticed.

One --mode per misbehaviour. HTTP-level modes apply to the requests --where
names (page, action, sse, flood, all; each mode has a default), after the
first --skip of them were answered normally. Connection-level modes
(rst-accept, never-read, full-backlog) apply to every connection after the
first --good-conns. "/" (hammer's reachability probe) is an ordinary 200
unless --where all. "/flood" is the target for `hammer scenario get`.

Prints the listening port on the first line of stdout. On SIGTERM or SIGINT
prints "STATS {json}" (request counts, misbehaviours applied, requests that
lacked the session cookie) and exits.

Python 3 standard library only; listens on 127.0.0.1 only.
"""

import argparse
import gzip
import json
import os
import re
import secrets
import select
import signal
import socket
import sys
import threading
import time
import urllib.parse

HTTP_MODES = {
    # mode: default --where
    "good": None,
    "close-mid-headers": "action",
    "close-unanswered": "page",
    "close-mid-body": "action",
    "short-body": "action",
    "garbage": "action",
    "header-1mb": "action",
    "endless-headers": "action",
    "chunk-invalid": "action",
    "chunk-2e64": "action",
    "slow-bytes": "action",
    "all-500": "action",
    "redirect-loop": "page",
    "many-cookies": "page",
    "endless-1xx": "action",
    "two-responses": "action",
    "deep-json-page": "page",
    "endless-body": "flood",
    "sse-deep-json": "sse",
    "sse-silent": "sse",
    "sse-50mb": "sse",
    "sse-no-final-blank": "sse",
    "status-000": "action",
    "status-999": "action",
    "gzip-unoffered": "page",
    "switching-101": "action",
    # not a fault: the action's patch goes out at once, its answer 200 ms later
    "slow-answer": "action",
    "sse-repeat-value": "sse",
    # hostile peers (docs/reliability.md): codings and SSE framing
    "coding-stacked": "page",
    "coding-zstd": "page",
    "coding-x-foo": "page",
    "gzip-bomb": "page",
    "sse-gzip-bomb": "sse",
    "sse-line-ends-mixed": "sse",
    "sse-bom-mid": "sse",
    "sse-comments-forever": "sse",
    "sse-retry-huge": "sse",
    "sse-id-nul": "sse",
    "sse-endless-line": "sse",
}
CONN_MODES = {"rst-accept", "never-read", "full-backlog"}
WHERE = {"page", "action", "sse", "flood", "health", "all"}

SHELL = (
    "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"UTF-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\">\n"
    "<meta data-signals='{signals}'>\n"
    "<meta data-indicator=\"_connecting\" "
    "data-on-interval__duration.15s.leading=\"!$_connecting && @get('/_sse')\">\n"
    "<meta data-init=\"window.addEventListener('beforeunload', (evt) => "
    "{{ navigator.sendBeacon('/_session/close', '{ctx}'); }});\">\n"
    "<script type=\"module\" src=\"/datastar.js\"></script>\n"
    "</head>\n<body>\n<div class=\"container\" id=\"content\">\n{view}\n</div>\n"
    "</body>\n</html>\n"
)
VIEW = "<button data-on:click=\"@post('/_action/increment')\">+1</button>"


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = {}
        self.misbehaved = 0
        self.no_session = 0
        self.connections = 0

    def count(self, key, n=1):
        with self.lock:
            self.requests[key] = self.requests.get(key, 0) + n

    def snapshot(self):
        with self.lock:
            return {
                "requests": dict(self.requests),
                "misbehaved": self.misbehaved,
                "no_session": self.no_session,
                "connections": self.connections,
            }


class Context:
    def __init__(self, ctx_id, route, session):
        self.id = ctx_id
        self.route = route
        self.session = session
        self.signal = "count_" + re.sub(r"[^A-Za-z0-9_]", "_", ctx_id)
        self.count = 0
        self.version = 0
        self.cond = threading.Condition()


class Server:
    def __init__(self, args):
        self.args = args
        self.mode = args.mode
        self.where = args.where or HTTP_MODES.get(args.mode)
        self.skip_left = args.skip
        self.times_left = args.times  # None: every request after --skip
        self.stats = Stats()
        self.contexts = {}
        self.lock = threading.Lock()
        self.held = []  # never-read sockets, kept open
        self.stopping = threading.Event()
        self.started = time.monotonic()
        # A bomb is compressed once, before the port is printed: made per
        # request it takes a loaded machine past hammer's --timeout, and
        # the case would test the server's speed, not the bound.
        # (16 MiB of zeros for a page, of blank lines for a stream.)
        fill = {"gzip-bomb": b"\0", "sse-gzip-bomb": b"\n"}.get(self.mode)
        self.bomb = gzip.compress(fill * (16 << 20)) if fill else None

    # ---- helpers -------------------------------------------------------

    def should_misbehave(self, kind):
        """Whether this request (of kind page/action/sse/flood/...) misbehaves."""
        if self.mode == "good" or self.mode in CONN_MODES:
            return False
        if self.where != "all" and kind != self.where:
            return False
        with self.lock:
            if self.skip_left > 0:
                self.skip_left -= 1
                return False
            if self.times_left is not None:
                if self.times_left <= 0:
                    return False
                self.times_left -= 1
            self.stats.misbehaved += 1
        return True

    @staticmethod
    def send(sock, data):
        sock.sendall(data.encode() if isinstance(data, str) else data)

    @staticmethod
    def response(status, reason, headers=(), body=b"", keep_alive=True):
        if isinstance(body, str):
            body = body.encode()
        head = "HTTP/1.1 %d %s\r\n" % (status, reason)
        for name, value in headers:
            head += "%s: %s\r\n" % (name, value)
        head += "Content-Length: %d\r\n" % len(body)
        head += "Connection: %s\r\n\r\n" % ("keep-alive" if keep_alive else "close")
        return head.encode() + body

    @staticmethod
    def chunk(data):
        if isinstance(data, str):
            data = data.encode()
        return b"%x\r\n" % len(data) + data + b"\r\n"

    def wait_closed(self, sock, limit_s=60.0):
        """Holds a connection open until the client closes it (or the limit)."""
        end = time.monotonic() + limit_s
        while not self.stopping.is_set() and time.monotonic() < end:
            r, _, _ = select.select([sock], [], [], 0.2)
            if r:
                try:
                    if not sock.recv(65536):
                        return
                except OSError:
                    return

    @staticmethod
    def client_gone(sock):
        """True when the client closed (readable with EOF) or reset."""
        try:
            r, _, _ = select.select([sock], [], [], 0)
            if not r:
                return False
            return sock.recv(65536, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def session_of(self, headers):
        cookie = headers.get("cookie", "")
        m = re.search(r"(?:^|;\s*)via_session_id=([0-9a-f]+)", cookie)
        return m.group(1) if m else None

    # ---- connection handling -------------------------------------------

    def read_request(self, sock, buf):
        """Reads one request; returns (method, target, headers, body, rest) or None."""
        while b"\r\n\r\n" not in buf:
            if len(buf) > (1 << 20):
                return None
            try:
                data = sock.recv(65536)
            except OSError:
                return None
            if not data:
                return None
            buf += data
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            return None
        method, target, _ = parts
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.setdefault(name.strip().lower(), value.strip())
        length = int(headers.get("content-length", "0") or 0)
        while len(rest) < length:
            try:
                data = sock.recv(65536)
            except OSError:
                return None
            if not data:
                return None
            rest += data
        return method, target, headers, rest[:length], rest[length:]

    def handle_conn(self, sock):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        try:
            while not self.stopping.is_set():
                req = self.read_request(sock, buf)
                if req is None:
                    return
                method, target, headers, body, buf = req
                keep = self.route(sock, method, target, headers, body)
                if not keep or headers.get("connection", "").lower() == "close":
                    return
        except OSError:
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def route(self, sock, method, target, headers, body):
        """Answers one request; returns False when the connection must end."""
        path, _, query = target.partition("?")
        if path == "/":
            kind = "probe"
        elif path == "/_sse":
            kind = "sse"
        elif path.startswith("/_action/"):
            kind = "action"
        elif path == "/_session/close":
            kind = "close"
        elif path == "/_health":
            kind = "health"
        elif path == "/flood":
            kind = "flood"
        else:
            kind = "page"
        self.stats.count(kind)
        if self.should_misbehave(kind):
            return self.misbehave(sock, kind, method, path, query, headers, body)
        if kind == "probe":
            self.send(sock, self.response(200, "OK", [("Content-Type", "text/plain")], "ok\n"))
            return True
        if kind == "flood":
            self.send(sock, self.response(200, "OK", [("Content-Type", "text/plain")], "flood\n"))
            return True
        if kind == "health":
            return self.health(sock)
        if kind == "close":
            self.send(sock, self.response(200, "OK", [("Content-Type", "text/html")]))
            return True
        if kind == "page":
            return self.page(sock, method, path, headers)
        if kind == "action":
            return self.action(sock, method, path, headers, body)
        return self.sse(sock, query, headers)

    # ---- the php-via protocol, done right ------------------------------

    def new_context(self, route, headers):
        session = self.session_of(headers) or secrets.token_hex(16)
        ctx_id = "%s_/%s" % (route, secrets.token_hex(8))
        ctx = Context(ctx_id, route, session)
        with self.lock:
            self.contexts[ctx_id] = ctx
        return ctx

    def page_bytes(self, ctx, signals=None, extra_headers=()):
        if signals is None:
            signals = json.dumps({"via_ctx": ctx.id, "_disconnected": False},
                                 separators=(",", ":")).replace("/", "\\/")
        html = SHELL.format(signals=signals, ctx=ctx.id, view=VIEW)
        cookie = ("via_session_id=%s; expires=Wed, 30-Dec-2099 07:22:32 GMT; path=/; "
                  "httponly; samesite=Lax" % ctx.session)
        headers = [("Content-Type", "text/html; charset=utf-8")]
        headers += list(extra_headers)
        headers.append(("Set-Cookie", cookie))
        return self.response(200, "OK", headers, html)

    def page(self, sock, method, path, headers):
        if method != "GET":
            self.send(sock, self.response(405, "Method Not Allowed", [("Allow", "GET")]))
            return True
        ctx = self.new_context(path, headers)
        self.send(sock, self.page_bytes(ctx))
        return True

    def health(self, sock):
        with self.lock:
            n = len(self.contexts)
        # --health-grow: contexts that no client made, more every second (a leak).
        n += int(self.args.health_grow * (time.monotonic() - self.started))
        body = json.dumps({"status": "ok", "version": "misbehave",
                           "broker": {"driver": "InMemoryBroker", "connected": True},
                           "connections": {"contexts": n, "sse": 0}})
        self.send(sock, self.response(200, "OK", [("Content-Type", "application/json"),
                                                  ("Cache-Control", "no-store")], body))
        return True

    def lookup(self, ctx_id, headers):
        """(context, None) or (None, error response)."""
        with self.lock:
            ctx = self.contexts.get(ctx_id) if isinstance(ctx_id, str) else None
        if ctx is None:
            return None, self.response(400, "Bad Request", [("Content-Type", "text/plain")],
                                       "Invalid context")
        if self.session_of(headers) != ctx.session:
            with self.stats.lock:
                self.stats.no_session += 1
            return None, self.response(403, "Forbidden", [("Content-Type", "text/plain")],
                                       "Forbidden")
        return ctx, None

    def action(self, sock, method, path, headers, body, answer_delay_s=0.0):
        if method == "GET":
            self.send(sock, self.response(405, "Method Not Allowed", [("Allow", "POST")]))
            return True
        try:
            signals = json.loads(body or b"{}")
        except ValueError:
            signals = {}
        if not isinstance(signals, dict):
            signals = {}
        ctx, err = self.lookup(signals.get("via_ctx"), headers)
        if err:
            self.send(sock, err)
            return True
        if path != "/_action/increment":
            self.send(sock, self.response(500, "Internal Server Error", body="Action failed"))
            return True
        with ctx.cond:
            # php-via: the client's value of a TAB signal replaces the server's.
            v = signals.get(ctx.signal)
            if isinstance(v, int) and not isinstance(v, bool):
                ctx.count = v
            ctx.count += 1
            ctx.version += 1
            ctx.cond.notify_all()
        if answer_delay_s:  # the stream carries the patch meanwhile
            time.sleep(answer_delay_s)
        self.send(sock, self.response(200, "OK", [("Content-Type", "text/html")]))
        return True

    SSE_HEAD = ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n"
                "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n")

    @staticmethod
    def elements_event():
        return "event: datastar-patch-elements\ndata: elements %s\n\n" % VIEW

    @staticmethod
    def signals_event(ctx, value):
        return "event: datastar-patch-signals\ndata: signals %s\n\n" % json.dumps(
            {ctx.signal: value}, separators=(",", ":"))

    def sse_context(self, query, headers):
        q = urllib.parse.parse_qs(query)
        try:
            signals = json.loads(q.get("datastar", ["{}"])[0])
        except ValueError:
            signals = {}
        ctx_id = signals.get("via_ctx") if isinstance(signals, dict) else None
        return self.lookup(ctx_id, headers)

    def stream_patches(self, sock, ctx, seen, frame=None):
        """Sends one patch per change of the context's count until the client
        goes; frame(event, n), when given, rewrites the n-th (from 0)."""
        n = 0
        while not self.stopping.is_set():
            with ctx.cond:
                if ctx.version == seen:
                    ctx.cond.wait(0.2)
                if ctx.version == seen:
                    value = None
                else:
                    seen, value = ctx.version, ctx.count
            if value is None:
                if self.client_gone(sock):
                    return False
                continue
            ev = self.signals_event(ctx, value)
            self.send(sock, self.chunk(frame(ev, n) if frame else ev))
            n += 1
        return False

    def sse(self, sock, query, headers):
        ctx, err = self.sse_context(query, headers)
        if err:
            self.send(sock, err)
            return True
        with ctx.cond:
            seen, value = ctx.version, ctx.count
        self.send(sock, self.SSE_HEAD)
        self.send(sock, self.chunk(self.elements_event()) +
                  self.chunk(self.signals_event(ctx, value)))
        return self.stream_patches(sock, ctx, seen)

    # ---- misbehaviours ---------------------------------------------------

    def misbehave(self, sock, kind, method, path, query, headers, body):
        m = self.mode
        if m == "slow-answer":
            return self.action(sock, method, path, headers, body, answer_delay_s=0.2)
        if m == "close-unanswered":
            # The request read, the connection closed without a byte: a
            # server going away under it (a restart).
            return False
        if m == "close-mid-headers":
            self.send(sock, "HTTP/1.1 200 OK\r\nContent-Type: text/ht")
            return False
        if m == "close-mid-body":
            self.send(sock, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "64\r\n" + "x" * 30)
            return False
        if m == "short-body":
            self.send(sock, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + "x" * 10)
            return False
        if m == "garbage":
            self.send(sock, b"\x00\xff\xfeGARBAGE, not HTTP\r\n\r\n" + bytes(range(256)) * 2)
            self.wait_closed(sock)
            return False
        if m == "header-1mb":
            self.send(sock, b"HTTP/1.1 200 OK\r\nX-Huge: " + b"a" * (1 << 20) +
                      b"\r\nContent-Length: 0\r\n\r\n")
            self.wait_closed(sock)
            return False
        if m == "endless-headers":
            self.send(sock, "HTTP/1.1 200 OK\r\n")
            n = 0
            while not self.stopping.is_set():
                block = "".join("X-Endless-%d: yes\r\n" % (n + i) for i in range(2000))
                n += 2000
                self.send(sock, block)
            return False
        if m == "chunk-invalid":
            self.send(sock, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "zz\r\nhello\r\n0\r\n\r\n")
            self.wait_closed(sock)
            return False
        if m == "chunk-2e64":
            # 2^64 in hex: one more than a 64-bit size can hold.
            self.send(sock, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "10000000000000000\r\n" + "x" * 100)
            self.wait_closed(sock)
            return False
        if m == "slow-bytes":
            resp = self.response(200, "OK", [("Content-Type", "text/html")])
            for i in range(len(resp)):
                if self.stopping.is_set():
                    return False
                self.send(sock, resp[i:i + 1])
                time.sleep(0.1)
            return False
        if m == "all-500":
            self.send(sock, self.response(500, "Internal Server Error",
                                          [("Content-Type", "text/plain")],
                                          "Internal Server Error"))
            return True
        if m == "redirect-loop":
            self.send(sock, self.response(302, "Found", [("Location", path +
                                                          ("?" + query if query else ""))]))
            return True
        if m == "many-cookies":
            return self.many_cookies(sock, method, path, headers)
        if m == "endless-1xx":
            block = b"HTTP/1.1 100 Continue\r\n\r\n" * 1000
            while not self.stopping.is_set():
                self.send(sock, block)
            return False
        if m == "two-responses":
            return self.two_responses(sock, kind, method, path, query, headers, body)
        if m == "deep-json-page":
            ctx = self.new_context(path, headers)
            deep = "{" + '"d":{' * 800 + "}" * 800 + "}"
            signals = '{"via_ctx":%s,"_disconnected":false,"deep":%s}' % (
                json.dumps(ctx.id).replace("/", "\\/"), deep)
            self.send(sock, self.page_bytes(ctx, signals=signals))
            return True
        if m == "endless-body":
            self.send(sock, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n")
            piece = self.chunk(b"e" * 65536) * 16
            while not self.stopping.is_set():
                self.send(sock, piece)
            return False
        if m in ("status-000", "status-999"):
            # Out of RFC 9110's 100-599: a status no client can act on.
            self.send(sock, "HTTP/1.1 %s Odd\r\nContent-Length: 2\r\n\r\nno" % m[-3:])
            return True
        if m == "gzip-unoffered":
            # A gzip page sent to a client that offered no Accept-Encoding.
            ctx = self.new_context(path, headers)
            raw = self.page_bytes(ctx)
            head, _, page = raw.partition(b"\r\n\r\n")
            packed = gzip.compress(page)
            head = re.sub(rb"Content-Length: \d+", b"Content-Length: %d" % len(packed), head)
            self.send(sock, head + b"\r\nContent-Encoding: gzip\r\n\r\n" + packed)
            return True
        if m in ("coding-stacked", "coding-zstd", "coding-x-foo", "gzip-bomb"):
            # A page in a coding hammer must refuse, or a bomb: 16 MiB of
            # zeros in a few KiB of gzip (past the 8 MiB body bound).
            ctx = self.new_context(path, headers)
            raw = self.page_bytes(ctx)
            head, _, page = raw.partition(b"\r\n\r\n")
            coding = {"coding-stacked": b"gzip, br", "coding-zstd": b"zstd",
                      "coding-x-foo": b"x-foo", "gzip-bomb": b"gzip"}[m]
            packed = self.bomb if m == "gzip-bomb" else gzip.compress(page)
            head = re.sub(rb"Content-Length: \d+", b"Content-Length: %d" % len(packed), head)
            self.send(sock, head + b"\r\nContent-Encoding: " + coding + b"\r\n\r\n" + packed)
            return True
        if m == "switching-101":
            # A 101 hands the connection to another protocol: nothing after
            # it is HTTP/1.1, so a client must not send its next request here.
            self.send(sock, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\n\r\n")
            self.wait_closed(sock)
            return False
        if m.startswith("sse-"):
            return self.sse_misbehave(sock, query, headers)
        raise AssertionError("mode %s has no misbehaviour" % m)

    def many_cookies(self, sock, method, path, headers):
        ctx = self.new_context(path, headers)
        # The session cookie comes last, so a jar that keeps only what fits
        # in a buffer would drop exactly the one that matters.
        extra = [("Set-Cookie", "mb%04d=%s; Path=/" % (i, secrets.token_hex(12)))
                 for i in range(1000)]
        self.send(sock, self.page_bytes(ctx, extra_headers=extra))
        return True

    def two_responses(self, sock, kind, method, path, query, headers, body):
        # The right answer and an unsolicited second one in the same write:
        # a client must not take the second for the answer to its next request.
        if kind == "action":
            try:
                signals = json.loads(body or b"{}")
            except ValueError:
                signals = {}
            ctx, err = self.lookup(signals.get("via_ctx") if isinstance(signals, dict)
                                   else None, headers)
            if ctx:
                with ctx.cond:
                    ctx.count += 1
                    ctx.version += 1
                    ctx.cond.notify_all()
            first = err or self.response(200, "OK", [("Content-Type", "text/html")])
        else:
            first = self.response(200, "OK", [("Content-Type", "text/plain")], "ok\n")
        second = self.response(500, "Internal Server Error", [("Content-Type", "text/plain")],
                               "unsolicited")
        self.send(sock, first + second)
        return True

    def sse_misbehave(self, sock, query, headers):
        m = self.mode
        ctx, err = self.sse_context(query, headers)
        if err:
            self.send(sock, err)
            return True
        with ctx.cond:
            seen, value = ctx.version, ctx.count
        if m == "sse-gzip-bomb":
            # A gzip stream whose one chunk decodes to 16 MiB of blank lines:
            # past the bound on what one read may expand to.
            self.send(sock, self.SSE_HEAD.replace("Cache-Control",
                                                  "Content-Encoding: gzip\r\nCache-Control"))
            self.send(sock, self.chunk(self.bomb))
            self.wait_closed(sock)
            return False
        self.send(sock, self.SSE_HEAD)
        if m == "sse-silent":
            self.wait_closed(sock, limit_s=3600)
            return False
        if m == "sse-comments-forever":
            # The page's state, then only heartbeats: no patch ever comes.
            self.send(sock, self.chunk(self.elements_event()) +
                      self.chunk(self.signals_event(ctx, value)))
            while not self.stopping.is_set() and not self.client_gone(sock):
                self.send(sock, self.chunk(": keepalive\n"))
                time.sleep(0.05)
            return False
        if m == "sse-endless-line":
            # The page's state, then one line that never ends, a few bytes
            # every 50 ms (far under the 1 MiB line bound in a short run).
            self.send(sock, self.chunk(self.elements_event()) +
                      self.chunk(self.signals_event(ctx, value)))
            self.send(sock, self.chunk("data: signals {\"pad\":\""))
            while not self.stopping.is_set() and not self.client_gone(sock):
                self.send(sock, self.chunk("aaaaaaaa"))
                time.sleep(0.05)
            return False
        if m in ("sse-line-ends-mixed", "sse-bom-mid", "sse-retry-huge", "sse-id-nul"):
            return self.sse_framing(sock, ctx, seen, value)
        self.send(sock, self.chunk(self.elements_event()))
        if m == "sse-deep-json":
            deep = '{"x":' * 1000 + "1" + "}" * 1000
            self.send(sock, self.chunk("event: datastar-patch-signals\ndata: signals %s\n\n"
                                       % deep))
            self.send(sock, self.chunk(self.signals_event(ctx, value)))
            return self.stream_patches(sock, ctx, seen)
        if m == "sse-50mb":
            self.send(sock, self.chunk('event: datastar-patch-signals\ndata: signals {"pad":"'))
            piece = self.chunk(b"a" * 65536)
            for _ in range(50 * 16):  # 50 MiB
                if self.stopping.is_set():
                    return False
                self.send(sock, piece)
            self.send(sock, self.chunk('"}\n\n'))
            self.send(sock, self.chunk(self.signals_event(ctx, value)))
            return self.stream_patches(sock, ctx, seen)
        if m == "sse-repeat-value":
            # The page's state, then the same count again (a server that
            # re-sends its state): a patch that answers no action.
            state = self.signals_event(ctx, value)
            self.send(sock, self.chunk(state) + self.chunk(state))
            return self.stream_patches(sock, ctx, seen)
        if m == "sse-no-final-blank":
            ev = self.signals_event(ctx, value)[:-1]  # one "\n" short of an event
            self.send(sock, self.chunk(ev) + b"0\r\n\r\n")
            return False
        raise AssertionError("mode %s has no SSE misbehaviour" % m)

    def sse_framing(self, sock, ctx, seen, value):
        """The page's state and then one patch per change, each event framed
        as the mode says: line ends CR, CRLF and LF in turn (WHATWG: all
        three end a line); before each patch, a decoy patch whose first line
        starts with U+FEFF (only a stream's first BOM is stripped, so
        "\ufeffevent" is an unknown field and the decoy a "message" event,
        no patch: a client that strips it sees a count of -1000); a retry: of 10^30 ms and
        an id: with a NUL (ignored) before each patch."""
        m = self.mode

        def frame(ev, n):
            if m == "sse-line-ends-mixed":
                return ev.replace("\n", ("\r", "\r\n", "\n")[n % 3])
            if m == "sse-bom-mid":
                return ("\ufeffevent: datastar-patch-signals\ndata: signals %s\n\n"
                        % json.dumps({ctx.signal: -1000}, separators=(",", ":"))) + ev
            if m == "sse-retry-huge":
                return "retry: 1" + "0" * 30 + "\n" + ev
            return "id: a\0b\n" + ev  # sse-id-nul

        self.send(sock, self.chunk(self.elements_event()) +
                  self.chunk(self.signals_event(ctx, value)))
        return self.stream_patches(sock, ctx, seen, frame)

    # ---- accept loop -------------------------------------------------------

    def serve(self, listener):
        n = 0
        while not self.stopping.is_set():
            if self.mode == "full-backlog" and n >= self.args.good_conns:
                # Stop accepting: the backlog fills, later SYNs are dropped.
                self.stopping.wait()
                return
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            n += 1
            with self.stats.lock:
                self.stats.connections += 1
            bad = n > self.args.good_conns
            if bad and self.mode == "rst-accept":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00"
                                b"\x00\x00\x00\x00")
                sock.close()
                with self.stats.lock:
                    self.stats.misbehaved += 1
                continue
            if bad and self.mode == "never-read":
                self.held.append(sock)
                with self.stats.lock:
                    self.stats.misbehaved += 1
                continue
            threading.Thread(target=self.handle_conn, args=(sock,), daemon=True).start()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    ap.add_argument("--mode", default="good", choices=sorted(set(HTTP_MODES) | CONN_MODES))
    ap.add_argument("--where", choices=sorted(WHERE),
                    help="which requests misbehave (default: the mode's own)")
    ap.add_argument("--skip", type=int, default=0,
                    help="answer the first N matching requests normally")
    ap.add_argument("--times", type=int, default=None,
                    help="misbehave this many times (after --skip), then behave")
    ap.add_argument("--good-conns", type=int, default=0,
                    help="connection-level modes: serve the first N connections normally")
    ap.add_argument("--health-grow", type=float, default=0.0,
                    help="/_health counts this many more contexts every second, "
                         "none of them a client's (a leak)")
    args = ap.parse_args()

    srv = Server(args)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(1 if args.mode == "full-backlog" else 1024)
    print(listener.getsockname()[1], flush=True)

    def stop(signum, frame):
        srv.stopping.set()
        print("STATS " + json.dumps(srv.stats.snapshot()), flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    srv.serve(listener)
    while True:  # full-backlog: wait for the signal
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
