#!/usr/bin/env python3
"""wire_split.py — where a browser tab's action->patch time goes, read from
a loopback capture (tcpdump -tt -n -A on lo) of a counter run: for each
action, the time from the packet carrying its POST body to the packet
carrying its patch, as the wire saw them. That span is the kernel's and
the server's; what hammer reports beyond it is the client's own.

Actions and patches are paired by the context's hex id, which both carry
in plain text over HTTP/1.1 and HTTP/2 alike (the action's JSON body has
"via_ctx":"/bench/counter_/HEX", the patch's signal is count__..__HEX),
so it works whether the patch comes on the action's connection (HTTP/2)
or on the SSE stream's (HTTP/1.1).

usage: wire_split.py PORT CAPTURE  ->  "n p50 p90" in microseconds
"""
import re
import statistics
import sys

HEAD = re.compile(r'^(\d+\.\d+) IP6? [\d.:a-f]+\.(\d+) > [\d.:a-f]+\.(\d+): ')
ACTION = re.compile(r'"via_ctx":"\\?/bench\\?/counter_\\?/([0-9a-f]+)"')
PATCH = re.compile(r'count__bench_counter__([0-9a-f]+)')


def packets(path):
    """(time, src port, dst port, payload text) of each captured packet."""
    cur = None
    with open(path, encoding='latin-1') as f:
        for line in f:
            m = HEAD.match(line)
            if m:
                if cur:
                    yield cur
                cur = [float(m[1]), int(m[2]), int(m[3]), '']
            elif cur:
                cur[3] += line.rstrip('\n')
    if cur:
        yield cur


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    sent = {}  # hex -> times of actions still waiting for their patch
    spans = []
    for t, src, dst, text in packets(path):
        if dst == port:
            for hexid in ACTION.findall(text):
                sent.setdefault(hexid, []).append(t)
        elif src == port and 'datastar-patch-signals' in text:
            for hexid in PATCH.findall(text):
                if sent.get(hexid):
                    spans.append((t - sent[hexid].pop(0)) * 1e6)
    if len(spans) < 10:
        print('0 - -')
        return
    q = statistics.quantiles(spans, n=10)
    print('%d %.0f %.0f' % (len(spans), statistics.median(spans), q[8]))


main()
