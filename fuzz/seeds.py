#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/corpus/<target>/ (run from anywhere:
python3 fuzz/seeds.py). Each seed is the 12-byte header of fuzz_common.h
(flags, eight split sizes, expansion) followed by the payload.

Where the bytes come from:
  - "captured": bench_app (hammer's php-via stand-in), read off the socket
    byte for byte: the page with its <meta data-signals> tag and OpenSwoole's
    Set-Cookie, an action's empty 200, the chunked SSE stream.
  - "protocol": written from docs of php-via's wire behaviour
    (php-via-protocol.md): the withSecureCookie / withEmbeddable cookies, the
    reload script, php-via's hashed pre-0.12 action ids.
  - the rest mirrors inputs of the unit tests (tests/test_*.c).
Seeds stay small: libFuzzer's -max_len follows the largest one."""

import gzip
import os
import shutil
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

WHOLE = (0,) * 8
SPLITS = (1, 7, 3, 64, 2, 200, 5, 13)


def header(flags=0, splits=WHOLE, expand=(0, 0, 0)):
    return bytes([flags, *splits, *expand])


SEEDS = {}


def seed(target, name, payload, flags=0, splits=WHOLE, expand=(0, 0, 0)):
    if isinstance(payload, str):
        payload = payload.encode()
    SEEDS.setdefault(target, []).append((name, header(flags, splits, expand) + payload))


# ---- captured from bench_app ----------------------------------------------

PAGE_BODY = (
    b'<!DOCTYPE html>\n<html>\n<head>\n<meta charset="UTF-8">\n'
    b'<meta name="viewport" content="width=device-width, initial-scale=1.0">\n'
    b'<meta data-signals=\'{"via_ctx":"\\/bench\\/counter_\\/ab759c80d89ecc78",'
    b'"_disconnected":false}\'>\n'
    b'<meta data-indicator="_connecting" data-on-interval__duration.15s.leading='
    b'"!$_connecting && @get(\'/_sse\')">\n'
    b'<meta data-init="window.addEventListener(\'beforeunload\', (evt) => { '
    b"navigator.sendBeacon('/_session/close', '/bench/counter_/ab759c80d89ecc78'); "
    b'});">\n<script type="module" src="/datastar.js"></script>\n</head>\n<body>\n'
    b'<div class="container" id="content">\n'
    b"<button data-on:click=\"@post('/_action/increment')\">+1</button>\n"
    b"</div>\n</body>\n</html>\n"
)
OPENSWOOLE_COOKIE = (
    b"via_session_id=b41c8f52174be1eecde0246e24864b1c; "
    b"expires=Wed, 30-Dec-2026 07:28:14 GMT; path=/; httponly; samesite=Lax"
)
PAGE_RESP = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
    b"Set-Cookie: " + OPENSWOOLE_COOKIE + b"\r\n"
    b"X-Via-Worker: 0\r\nConnection: keep-alive\r\n"
    b"Content-Length: %d\r\n\r\n" % len(PAGE_BODY)
) + PAGE_BODY
ACTION_RESP = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Via-Worker: 0\r\n"
    b"Connection: keep-alive\r\nContent-Length: 0\r\n\r\n"
)
SSE_EVENTS = [
    b"event: datastar-patch-elements\n"
    b"data: elements <button data-on:click=\"@post('/_action/increment')\">+1</button>\n\n",
    b"event: datastar-patch-signals\n"
    b'data: signals {"count__bench_counter__ab759c80d89ecc78":0}\n\n',
    b"event: datastar-patch-signals\n"
    b'data: signals {"count__bench_counter__ab759c80d89ecc78":1}\n\n',
]
SSE_BODY = b"".join(SSE_EVENTS)


SSE_RESP = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"X-Accel-Buffering: no\r\nX-Via-Worker: 0\r\nConnection: keep-alive\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
) + b"".join(b"%x\r\n" % len(e) + e + b"\r\n" for e in SSE_EVENTS)
ACTION_REQ = (
    b"POST /_action/increment HTTP/1.1\r\nHost: 127.0.0.1:38711\r\n"
    b"Accept: text/event-stream, text/html, application/json\r\n"
    b"Content-Type: application/json\r\nDatastar-Request: true\r\n"
    b"Origin: http://127.0.0.1:38711\r\n"
    b"Cookie: via_session_id=b41c8f52174be1eecde0246e24864b1c\r\n"
    b"Content-Length: 47\r\n\r\n"
    b'{"via_ctx": "/bench/counter_/ab759c80d89ecc78"}'
)

# ---- http_resp ----------------------------------------------------------------
# flags: 1 HEAD, 2 stream, 4 pick, 8 small, 16 finish, 32 head-alt, 64 reconnect

seed("http_resp", "page", PAGE_RESP)
seed("http_resp", "page_split", PAGE_RESP, splits=SPLITS)
seed("http_resp", "action_then_page", ACTION_RESP + PAGE_RESP, flags=16)
seed("http_resp", "sse_stream", SSE_RESP, flags=2, splits=SPLITS)
seed("http_resp", "sse_pick", SSE_RESP, flags=4 | 16)
seed("http_resp", "head", b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n"
     b"Content-Type: text/html\r\n\r\n" + ACTION_RESP, flags=1)
seed("http_resp", "close_delimited", b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n"
     b"some body until the close", flags=16 | 2, splits=SPLITS)
seed("http_resp", "informational",
     b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
     b"HTTP/1.1 201 Created\r\nLocation: /x\r\nContent-Length: 2\r\n\r\nok")
seed("http_resp", "chunked_trailers",
     b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n", splits=SPLITS)
seed("http_resp", "pipelined",
     b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Via-Worker: 1\r\n\r\none"
     b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n"
     b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nthree"
     b"HTTP/1.1 200 OK\r\n\r\nrest", flags=32 | 64 | 16)
seed("http_resp", "upgrade", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
     b"Connection: Upgrade\r\n\r\n\x81\x05hello")
seed("http_resp", "redirect", b"HTTP/1.0 302 Found\r\nLocation: http://x/y\r\n"
     b"Connection: keep-alive\r\nContent-Length: 0\r\n\r\n")
seed("http_resp", "error_500", b"HTTP/1.1 500 Internal Server Error\r\n"
     b"Content-Type: text/plain\r\nContent-Length: 21\r\n\r\nInternal Server Error", flags=8)
seed("http_resp", "many_cookies", b"HTTP/1.1 200 OK\r\n" + b"".join(
    b"Set-Cookie: c%d=v%d; Path=/\r\n" % (i, i) for i in range(20)) +
    b"Content-Length: 0\r\n\r\n")
seed("http_resp", "huge_chunk", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"ffffffffffffffff\r\nabc", flags=16)

# ---- http_req -------------------------------------------------------------------
# flags: 1 small, 2 reconnect

GET_PAGE = b"GET /bench/counter HTTP/1.1\r\nHost: 127.0.0.1:38711\r\nAccept: text/html\r\n\r\n"
seed("http_req", "page_get", GET_PAGE)
seed("http_req", "action_post", ACTION_REQ, splits=SPLITS)
seed("http_req", "pipelined", GET_PAGE + ACTION_REQ +
     b"GET /_sse?datastar=%7B%22via_ctx%22%3A%22%2Fbench%2Fcounter_%2Fab759c80d89ecc78%22%7D "
     b"HTTP/1.1\r\nHost: h\r\nAccept: text/event-stream\r\nDatastar-Request: true\r\n\r\n"
     b"POST /_session/close HTTP/1.1\r\nHost: h\r\nContent-Length: 32\r\nConnection: close\r\n"
     b"\r\n/bench/counter_/ab759c80d89ecc78", flags=2)
seed("http_req", "chunked_post", b"POST /_action/increment HTTP/1.1\r\nHost: h\r\n"
     b"Transfer-Encoding: chunked\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n"
     b"7\r\ndatasta\r\n9\r\nr=%7B%7D&\r\n0\r\n\r\n", splits=SPLITS)
seed("http_req", "expect", b"POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
     b"Content-Length: 3\r\n\r\nabc", flags=1)
seed("http_req", "upgrade", b"GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
     b"Connection: Upgrade\r\n\r\n\x81\x05hello")
seed("http_req", "http10_head", b"HEAD /_health HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n"
     b"Connection: keep-alive\r\n\r\n", flags=2)

# ---- sse ------------------------------------------------------------------------
# flags: 1 small, 2 as-signals, 4 as-elements, 8 table

seed("sse", "php_via_stream", SSE_BODY)
seed("sse", "php_via_split", SSE_BODY, splits=SPLITS)
seed("sse", "reload_script",
     b"event: datastar-patch-elements\ndata: selector body\ndata: mode append\n"
     b"data: elements <script data-effect=\"el.remove()\">window.location.reload()</script>\n\n")
seed("sse", "component", b"event: datastar-patch-elements\ndata: selector #c-1\n"
     b"data: elements <div id=\"c-1\">\ndata: elements <span>x</span>\ndata: elements </div>\n"
     b"data: useViewTransition true\ndata: wrap svg\n\n")
seed("sse", "scoped_signals", b"event: datastar-patch-signals\n"
     b'data: signals {"route__bench_counter_count":3,"session_ab_count":4,"global_count":5,'
     b'"a":{"b":{"count":6}},"via_ctx":"\\/bench\\/counter_\\/x","n":"caf\\u00e9"}\n'
     b"data: onlyIfMissing true\n\n", splits=SPLITS)
seed("sse", "multiline_signals", b"event: datastar-patch-signals\ndata: signals {\"a\":\n"
     b"data: signals [1,2,{\"count\":7.0}]}\n\n", flags=2)
seed("sse", "fields", b"\xef\xbb\xbf: heartbeat\r\nid: 7\rretry: 1500\r\nevent: x\ndata\n"
     b"data:no space\ndata:  two\n\nid\n\nevent: datastar-patch-signals\ndata: signals {}\n",
     splits=SPLITS)
table = b"<table>" + b"".join(b"<tr>" + b"<td>1</td>" * 10 + b"</tr>" for _ in range(20)) + \
    b"</table>"
seed("sse", "table", b"event: datastar-patch-elements\ndata: elements " + table + b"\n\n" +
     b"event: datastar-patch-elements\ndata: elements " + table + b"\n\n", flags=8)
seed("sse", "nested_ok", b"event: datastar-patch-signals\ndata: signals " + b'{"a":' * 20 +
     b"1" + b"}" * 20 + b"\n\n", flags=2)
# The expansion repeats '{"a":' 32 times (depth 33): a start from which the
# fuzzer can raise the repeat count (bytes 9-11 of the header).
NEST = b"event: datastar-patch-signals\ndata: signals {\"a\":1,\"b\":" + b'{"a":' + b"[]}}\n\n"
seed("sse", "nested_expand", NEST, flags=0x80, expand=(NEST.index(b'{"a":['), 4, 2))

# The scan for one signal (hm_datastar_scan_int) and the value_only watch:
# flat patches it decides after a baseline, and the shapes it leaves to
# jansson (an escape, an exponent, a duplicate, a nested object).
seed("sse", "scan_flat", b"".join(b"event: datastar-patch-signals\ndata: signals " + p + b"\n\n" for p in (
    b'{"count__r__3f":1}', b'{ "a" : "x" , "count__r__3f" : 2 , "t":true,"n":null}',
    b'{"count__r__3f":2}', b'{"c\\u006funt":3}', b'{"count":4e0}', b'{"count":5,"count":6}',
    b'{"a":{"count":9}}', b'{"count":-0}', b'{"count":007}', b'{}')), splits=SPLITS)

# ---- cookie ---------------------------------------------------------------------
# each line: selector byte (host bits 0-1, path bits 2-3, secure bit 4, days
# bits 5-7), then the Set-Cookie value; flags 1: lines are name=value puts.

SECURE, PATH_ACTION, DAYS = 16, 2 << 2, 32
seed("cookie", "openswoole", b"\x00" + OPENSWOOLE_COOKIE)
seed("cookie", "php_via_variants", b"\n".join([
    b"\x00" + OPENSWOOLE_COOKIE,
    bytes([SECURE]) + b"__Host-via_session_id=0123456789abcdef0123456789abcdef; "
    b"expires=Wed, 30-Dec-2026 07:28:14 GMT; path=/; secure; httponly; samesite=Lax",
    bytes([SECURE]) + b"via_session_id=0123456789abcdef0123456789abcdef; Path=/; "
    b"Max-Age=2592000; HttpOnly; SameSite=None; Secure; Partitioned",
    bytes([PATH_ACTION]) + b"flash=1; Max-Age=0",
    bytes([1 | DAYS]) + b"lb=s1; Domain=.Example.COM; Path=/a",
    b"\x00" + b"old=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
    bytes([2]) + b"ip=1; Domain=127.0.0.1",
    b"\x00" + b"__Secure-x=1",
    bytes([3 << 5]) + b"later=1; expires=Sun, 06 Nov 1994 08:49:37 GMT",
    b"\x00" + b"asc=1; expires=Sun Nov  6 08:49:37 2094",
]))
seed("cookie", "many", b"\n".join(bytes([i % 16]) + b"c%d=%s; Path=/%s" % (
    i, b"v" * (i % 7), b"a" * (i % 3)) for i in range(60)))
seed("cookie", "put", b"\x00via_session_id=0123456789abcdef\n\x01__Host-x=1\n\x02a=b;c", flags=1)

# ---- via_html -------------------------------------------------------------------
# flags 1: the first line is the action name

seed("via_html", "counter_page", PAGE_BODY)
seed("via_html", "hashed_action", b"increment\n<meta data-signals=\"{&quot;via_ctx&quot;:"
     b"&quot;\\/r_\\/1&quot;}\"><button data-on-click=\"@post('/base/_action/increment-3f2a')\">"
     b"<!-- <meta data-signals='{}'> --><script>x='<meta data-signals=1>'</script>"
     b"<button data-on:click=@post(`/_action/increment`)>", flags=1)
seed("via_html", "entities", b"<META Data-Signals = '{\"via_ctx\":\"&#x2F;a&#47;b&amp;&lt;"
     b"&#0;&#xD800;&#1114112;\"}'><textarea><meta data-signals='x'></textarea>")
seed("via_html", "nested_ok", b"<meta data-signals='" + b'{"a":' * 20 + b"1" + b"}" * 20 +
     b"'>")
META = b"<meta data-signals='{\"via_ctx\":\"c\",\"a\":[1]}'>"
seed("via_html", "nested_expand", META, flags=0x80, expand=(META.index(b"["), 0, 2))

# ---- url ------------------------------------------------------------------------

for i, u in enumerate([
    b"http://127.0.0.1:3099/bench/counter",
    b"https://Example.COM/a/b?x=1&y=%20#frag",
    b"http://[::1]:8080/?q",
    b"https://h:/",
    b"http://h:65535?only=query",
    b"HTTP://a.b-c_d~e!$&'()*+,;=%41/p",
    b"http://user@h/",
    b"ftp://h/",
    b"http://[::ffff:127.0.0.1]/x#y?z",
]):
    seed("url", "url%d" % i, u)

# ---- hdr_log ----------------------------------------------------------------------
# The histogram is the reference one of tests/test_hdr_log.c (1x1, 2x100,
# 1x1000 in a 1..3600000000 / 3 digits histogram), as hdr-histogram-js wrote it.

REF_B64 = b"HISTFAAAADV4nJNpmSzMwMAgxMDAwMjAwMDMAAEgNsO1yUsY4Hymw4wsrXxMuy24NqaxLd7DyAQAsiUIRw=="
seed("hdr_log", "one", REF_B64, flags=1)
seed("hdr_log", "log", b"#[Logged with hammer 0.1.0, values in microseconds]\n"
     b"#[Histogram log format version 1.3]\n"
     b"#[StartTime: 1767225600.000 (seconds since epoch), Thu Jan 01 00:00:00 UTC 2026]\n"
     b"#[BaseTime: 1767225600.000 (seconds since epoch)]\n"
     b"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
     b"\"Interval_Compressed_Histogram\"\n"
     b"0.000,1.000,1.000," + REF_B64 + b"\r\n"
     b"Tag=sse,1.000,1.000,1.000," + REF_B64 + b"\n")

# ---- php_compat -------------------------------------------------------------
# The first line is the key (form field, cookie name); flags 1: the data's
# first 8 bytes are also a double.

seed("php_compat", "action_body", b"datastar\n"
     b'{"via_ctx":"\\/bench\\/counter_\\/ab759c80d89ecc78",'
     b'"count__bench_counter__ab759c80d89ecc78":5,"_disconnected":false}')
seed("php_compat", "form", b"datastar\nvia_ctx=x&datastar=%7B%22count%22%3A1.5e3%2C%22s%22%3A"
     b"%22caf%C3%A9%22%7D&datastar=%7B%7D+&x")
seed("php_compat", "cookie", b"via_session_id\n via_session_id=\"0123456789abcdef0123456789abcdef\";"
     b" lb=s1; via_session_id=%41%2")
seed("php_compat", "casts", b"k\n[1,-0.0,1e308,4.9e-324,0.1,65451,\"12abc\",\"1e3\",\" 7\",true,"
     b"null,{},[0],{\"a\":\"\\ud83d\\ude00\\u0000/\"},12345678901234567890]")
seed("php_compat", "floats", b"k\n-1.0E+25", flags=1)
seed("php_compat", "bytes", b"k\n\x00\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xff\xed\xa0\x80/\"\\")

# ---- content_coding -----------------------------------------------------------
# Flags bits 0-1: 0 br, 1 gzip, 2 deflate. "captured": bench_app --brotli's
# counter page (quality 4, window 22, as php-via's withBrotli), read off the
# socket; gzip and deflate from Python's zlib over the SSE stream's bytes.

BR_PAGE = bytes.fromhex(
    "0b4d0100649ba9fb2f13510a7ed70e29cbec2683fcc645f810296df216386db30d9f8fa6a39d3ff55b5c4261"
    "e92b96265c1885d93a9716c3824e058bff2af20830b658b61e424fd518ba2326a16c00ebbd6d1d0463a301da"
    "21687acb68ea3415aefb414b1c5ec8f4dadda9aef098b125a162bc88d1bff01170ebf217cc61d5d913bbe3aa"
    "93aae8294adb55877ad31e8dddde8d0eb3be9ff4a1095b1fe427c85df2303fe045e85f6b20013bddc56460db"
    "dd04ae3ece98c82d60f57f3ff0b2ddfaf78439446ef746d2be10fac09581bb87a1efa8a727f55251aee9ce56"
    "8474b91a19389861887dbc80694dd30e7cf2ce97885e37558d3e72a98c55bfca6b0b42ecdf085d643d632412"
    "22778a52b0baa9b4659064cbae2e17eabf5c802d964238f08ccadf3732708dfefd42341b733a1e334ac61463"
    "19fb29ce3536ce2376ca45ce189852898cc0e5066c71360193e239758167e0e516c55208e81e7740f70faec4"
    "5997601bbdd3a45554b9981dab03")
seed("content_coding", "br_page", BR_PAGE)
seed("content_coding", "br_page_split", BR_PAGE, flags=4, splits=SPLITS)
SSE_TEXT = (b"event: datastar-patch-signals\ndata: signals {\"count\":1}\n\n"
            b"event: datastar-patch-elements\ndata: elements <div id=\"count\">1</div>\n\n")
seed("content_coding", "gzip_sse", gzip.compress(SSE_TEXT, mtime=0), flags=1, splits=SPLITS)
seed("content_coding", "deflate_zlib", zlib.compress(SSE_TEXT), flags=2)
_raw = zlib.compressobj(6, zlib.DEFLATED, -15)
seed("content_coding", "deflate_raw", _raw.compress(SSE_TEXT) + _raw.flush(), flags=2 | 4,
     splits=SPLITS)


# ---- flow_yaml --------------------------------------------------------------
# The example flows as shipped, and the unit test's every-feature file
# (tests/test_flow_parse.c, with its users.csv); flags 1: the flow, a NUL,
# then users.csv.

ROOT = os.path.dirname(HERE)


def read(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return f.read()


for fn in sorted(os.listdir(os.path.join(ROOT, "examples", "flows"))):
    if fn.endswith(".yaml"):
        seed("flow_yaml", "example_" + fn[:-5], read(os.path.join("examples", "flows", fn)))
FLOW_ALL = (
    b"name: shop\ncheck: {kind: constant, signal: count, value: 65451}\n"
    b"data:\n  users: {file: users.csv, order: random}\n"
    b"variables:\n  greeting: hello\n  colour: [red, green]\n"
    b"flows:\n  - name: browse\n    weight: 3\n    steps:\n"
    b"      - page: /shop/{{ users.name }}\n        name: shop page\n        timeout: 2s\n"
    b"      - sse: open\n      - think: 1s..3s\n      - set: {n: {random: [1, 6]}}\n"
    b"      - action: add\n        signals:\n          qty: {var: n}\n"
    b"          who: {csv: users.name}\n          note: \"5\"\n          price: 2.5\n"
    b"          tag: {one_of: [a, b]}\n          same: {signal: count}\n"
    b"          obj: {literal: {x: [1, 2]}}\n          dec: 0123\n          hex: 0x1f\n"
    b"      - wait: {signal: count, at_least: 1, timeout: 3s}\n"
    b"      - repeat: 3\n        probability: 0.5\n        steps:\n"
    b"          - get: /api?q={{ greeting }}\n          - expect: {signal: count, equals: 2}\n"
    b"      - close\n  - name: look\n    steps: [{page: /}]\n")
seed("flow_yaml", "everything", FLOW_ALL)
seed("flow_yaml", "own_csv", FLOW_ALL + b"\0name,age\nann,31\n\"bob, jr\",\"007\"\n", flags=1)
seed("flow_yaml", "tab", b"steps:\n\t- page: /\n")
seed("flow_yaml", "two_docs", b"steps: [{get: /}]\n---\nsteps: [{get: /}]\n")
seed("flow_yaml", "no_csv", b"data: {u: {file: nowhere.csv}}\nsteps: [{get: /}]\n")

# ---- har_import -------------------------------------------------------------
# The recordings of tests/data/, cut to their first entries and their
# bodies to 300 bytes (the SSE stream's text keeps its first events).
# flags: bits 0-1 --signals (1 all, 2 none), 4 --keep-assets, 8 think 0,
# 16 think x1000, 32 --name


def har_cut(rel, keep):
    import json
    d = json.loads(read(rel))
    es = d["log"]["entries"][:keep]
    for e in es:
        c = e.get("response", {}).get("content", {})
        if isinstance(c.get("text"), str):
            c["text"] = c["text"][:300]
        for h in ("headers", "cookies"):
            e.get("request", {})[h] = e.get("request", {}).get(h, [])[:4]
            e.get("response", {})[h] = e.get("response", {}).get(h, [])[:4]
    d["log"]["entries"] = es
    return json.dumps(d, separators=(",", ":")).encode()


seed("har_import", "bench_app_live", har_cut("tests/data/bench-app-live.har", 10))
seed("har_import", "bench_app_live_all", har_cut("tests/data/bench-app-live.har", 10), flags=1 | 4)
seed("har_import", "phpvia_counter", har_cut("tests/data/phpvia-bench.har", 11))
seed("har_import", "phpvia_pages", har_cut("tests/data/phpvia-bench.har", 14), flags=2 | 8)
seed("har_import", "phpvia_named", b"bench\0" + har_cut("tests/data/phpvia-bench.har", 6),
     flags=16 | 32)
seed("har_import", "not_har", b'{"log":{"entries":[]}}')

# ---- matrix_profiles ----------------------------------------------------------
# The example profiles files, and the unit test's continued command and
# indented keys (tests/test_matrix_profiles.c). flags: 1 override, 2 bad
# override.

seed("matrix_profiles", "matrix_ini", read("examples/matrix.ini"), flags=1)
seed("matrix_profiles", "php_via_ini", read("examples/php-via.ini"), flags=2)
seed("matrix_profiles", "continued",
     b"[matrix]\nruns = 2\nactions = 100\nconcurrency = 10\nhealth_timeout = 10s\n\n"
     b"[profile long]\ncommand = /usr/bin/env PAD=xxxxxxxx {bindir}/bench_app --port {port}"
     b"   ; a comment after it\nhealth = /_health\n\n"
     b"[profile continued]\ncommand = /bin/sh -c\n"
     b"    'exec \"$0\" --port \"$MATRIX_TEST_PORT\" --workers 1'\n"
     b"\n  ; a comment between continuation lines\n\t{bindir}/bench_app\n"
     b"env = MATRIX_TEST_PORT={port}\nhealth = /_health\n\n[workload counter]\nscenario = counter\n")
seed("matrix_profiles", "indented",
     b"[profile a]\n  command = x\n  health = /_health\n[workload w]\nscenario = counter\n")
seed("matrix_profiles", "port_continued",
     b"[profile a]\ncommand = x\nport = 80\n  81\n[workload w]\nscenario = counter\n")

# ---- h2_client ----------------------------------------------------------------
# A server's frames after the client preface, as tests/h2_test_server.c
# answers (its paths /ok, /reset, /refuse-once, /goaway-once, /no-status,
# /endless-100, /continuation-flood, /window-overflow, /push, /goaway-high,
# and its settings-window mode). HPACK: 0x88 is :status 200 (static index 8),
# 0x08 0x03 "100" a literal :status 100. flags: bits 0-1 streams 1-4,
# 4 POSTs, 8 the last one streamed.


def frame(ftype, flags, sid, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + sid.to_bytes(4, "big") + \
        payload


SETTINGS = frame(4, 0, 0)
SETTINGS_ACK = frame(4, 1, 0)
END_STREAM, END_HEADERS, ACK = 1, 4, 1


def ok(sid, body=b"hello"):
    return frame(1, END_HEADERS, sid, b"\x88\x0f\x10\x01" + b"7") + frame(0, END_STREAM, sid, body)


seed("h2_client", "ok", SETTINGS + SETTINGS_ACK + ok(1))
seed("h2_client", "ok_split", SETTINGS + SETTINGS_ACK + ok(1), splits=SPLITS)
seed("h2_client", "four_streams", SETTINGS + SETTINGS_ACK + b"".join(ok(i) for i in (7, 3, 1, 5)),
     flags=3)
seed("h2_client", "streamed_post", SETTINGS + frame(1, END_HEADERS, 1, b"\x88") +
     b"".join(frame(0, 0, 1, b"data: %d\n\n" % i) for i in range(5)) + frame(0, END_STREAM, 1),
     flags=4 | 8)
seed("h2_client", "reset", SETTINGS + frame(3, 0, 1, (2).to_bytes(4, "big")))
seed("h2_client", "refused", SETTINGS + frame(3, 0, 1, (7).to_bytes(4, "big")), flags=4)
seed("h2_client", "goaway_zero", SETTINGS + frame(7, 0, 0, (0).to_bytes(4, "big") +
     (0).to_bytes(4, "big") + b"bye"), flags=1)
seed("h2_client", "goaway_high", SETTINGS + frame(7, 0, 0, (0x7fffffff).to_bytes(4, "big") +
     (11).to_bytes(4, "big")) + ok(1))
seed("h2_client", "no_status", SETTINGS + frame(1, END_HEADERS | END_STREAM, 1, b"\x40\x01x\x01y"))
seed("h2_client", "endless_100", SETTINGS + frame(1, END_HEADERS, 1, b"\x08\x03100") * 40)
CONT = frame(9, 0, 1)
seed("h2_client", "continuation_flood", SETTINGS + frame(1, 0, 1, b"\x88") + CONT,
     flags=0x80, expand=(len(SETTINGS) + 10, len(CONT) - 1, 40))
seed("h2_client", "window_overflow", SETTINGS + frame(8, 0, 0, (0x7fffffff).to_bytes(4, "big")))
seed("h2_client", "push", SETTINGS + frame(5, END_HEADERS, 1, (2).to_bytes(4, "big") +
     b"\x82\x84\x86\x41\x01h") + ok(1))
seed("h2_client", "settings_window", frame(4, 0, 0, (4).to_bytes(2, "big") +
     (1 << 31).to_bytes(4, "big")))
seed("h2_client", "ping", SETTINGS + frame(6, 0, 0, b"12345678") + ok(1))
seed("h2_client", "http1", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


def main():
    for target, seeds in SEEDS.items():
        d = os.path.join(CORPUS, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in seeds:
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    print("wrote", sum(len(s) for s in SEEDS.values()), "seeds for", len(SEEDS), "targets")


if __name__ == "__main__":
    main()
