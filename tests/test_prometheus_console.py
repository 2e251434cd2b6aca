#!/usr/bin/env python3
"""deploy/prometheus/consoles/hammer.html in a real Prometheus: a short
hammer run against the embedded bench_app is scraped on loopback, and the
console page rendered from the scrape shows that run's figures as its
JSON has them (the final request count, the responses by status, OK, the
failures by kind) and the server's RSS and leak verdict, not a template
error.

usage: test_prometheus_console.py HAMMER CONSOLES_DIR
Exits 77 (skip) only when the prometheus binary is missing."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

SCRAPE_S = 1  # the scrape interval; every wait below is a count of them
# Where Debian's prometheus package puts the console library (prom.lib,
# menu.lib) that hammer.html builds on.
LIBRARIES = ("/usr/share/doc/prometheus/examples/console_libraries",
             "/etc/prometheus/console_libraries")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    """(status, body) of GET path from 127.0.0.1:port; status 0 when refused."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=30) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except (urllib.error.URLError, ConnectionError):
        return 0, ""


def query(port, expr):
    """The value of the instant query's first sample, or None."""
    status, body = get(port, "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    if status != 200:
        return None
    result = json.loads(body)["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def wait_text(path, text, proc):
    """Waits until the file at path has text (hammer's stderr); false when
    hammer exits first. The ctest TIMEOUT bounds a hang."""
    while True:
        with open(path) as f:
            if text in f.read():
                return True
        if proc.poll() is not None:
            return False
        time.sleep(0.1)


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    hammer, consoles = sys.argv[1], os.path.abspath(sys.argv[2])
    prometheus = shutil.which("prometheus")
    if not prometheus:
        print("SKIP: prometheus is not installed (Debian package prometheus; scripts/deps.sh)")
        sys.exit(77)
    libs = next((d for d in LIBRARIES if os.path.exists(os.path.join(d, "prom.lib"))), None)
    if not libs:
        fail("prometheus is installed but its console library prom.lib is in none of %s"
             % ", ".join(LIBRARIES))
    tmp = tempfile.mkdtemp(prefix="hm_console_")
    procs = []
    try:
        err = os.path.join(tmp, "hammer.err")
        doc = os.path.join(tmp, "run.json")
        # A bounded run; the linger keeps the final counts up for the scrape
        # and ends with SIGINT below.
        with open(err, "w") as e, open(os.path.join(tmp, "hammer.out"), "w") as o:
            h = subprocess.Popen([hammer, "-d", "5s", "-c", "2", "-R", "200", "--interval", "1s",
                                  "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "600s",
                                  "--json", doc, "scenario", "counter"],
                                 stdout=o, stderr=e, stdin=subprocess.DEVNULL)
        procs.append(h)
        if not wait_text(err, "path /metrics", h):
            fail("hammer ended before serving its metrics:\n" + open(err).read())
        mport = int(re.search(r"metrics on port (\d+)", open(err).read()).group(1))

        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: %ds\n  scrape_timeout: %ds\n"
                    "scrape_configs:\n  - job_name: hammer\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % (SCRAPE_S, SCRAPE_S, mport))
        pport = free_port()
        with open(os.path.join(tmp, "prometheus.log"), "w") as log:
            p = subprocess.Popen([prometheus, "--config.file=" + cfg,
                                  "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
                                  "--web.listen-address=127.0.0.1:%d" % pport,
                                  "--web.console.templates=" + consoles,
                                  "--web.console.libraries=" + libs],
                                 stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        procs.append(p)
        while get(pport, "/-/ready")[0] != 200:
            if p.poll() is not None:
                fail("prometheus exited %d:\n%s" % (p.returncode,
                                                    open(os.path.join(tmp, "prometheus.log")).read()))
            time.sleep(0.1)

        # The run over (its JSON written), Prometheus must get to its final count.
        if not wait_text(err, "metrics stay up", h):
            fail("hammer did not linger:\n" + open(err).read())
        with open(doc) as f:
            run = json.load(f)
        sent = run["actions"]["sent"]
        total = None
        for _ in range(60):  # scrape intervals
            total = query(pport, "sum(hammer_requests_total{job='hammer'})")
            if total == sent:
                break
            time.sleep(SCRAPE_S)
        if total != sent:
            fail("after 60 scrape intervals Prometheus has hammer_requests_total %s, the run "
                 "sent %d" % (total, sent))

        status, page = get(pport, "/consoles/hammer.html?job=hammer")
        if status != 200 or "error executing template" in page or "template:" in page:
            fail("the console did not render (HTTP %d):\n%s" % (status, page[:3000]))

        def cell(cls):
            m = re.search(r'class="%s">\s*(?:<a [^>]*>)?\s*([^<]*?)\s*<' % cls, page)
            return m.group(1) if m else None

        # What the run's JSON says, as the page must show it (a busy machine
        # may time a request out: then OK is below 100% and a kind is listed).
        ok_all = run["actions"]["ok"] == sent
        failed_kinds = sorted(k for k, n in run["errors"].items() if n)
        statuses = run["actions"]["by_status"]
        checks = [
            ("the run's final request count", cell("hm-requests") == str(sent),
             cell("hm-requests")),
            ("the run's scenario and target",
             re.search(r"<td>counter on http://127\.0\.0\.1:\d+/", page) is not None, None),
            ("its responses by status, as the JSON counts them",
             all('<td>%s</td><td class="hm-status">%d</td>' % (st, n) in page
                 for st, n in statuses.items()) and statuses, statuses),
            ("OK as the JSON has it", (cell("hm-ok") == "100%") == ok_all, cell("hm-ok")),
            ("the failures by kind the JSON has",
             ('class="hm-no-errors">none<' in page) == (not failed_kinds) and
             all("<td>%s</td>" % k in page for k in failed_kinds), failed_kinds),
            ("the server's RSS", re.match(r"^[\d.]+[KMG]iB$", cell("hm-rss") or "") is not None,
             cell("hm-rss")),
            ("the leak verdict", cell("hm-leak") == "no leak seen", cell("hm-leak")),
            ("graphs for the page's script", page.count("new PromConsole.Graph(") >= 6, None),
        ]
        bad = [(what, got) for what, ok, got in checks if not ok]
        for what, got in bad:
            print("FAIL: the console lacks %s%s" % (what, "" if got is None else " (got %r)" % got))
        if bad:
            print(page[:6000])
            sys.exit(1)

        h.send_signal(signal.SIGINT)  # ends the linger
        rc = h.wait(timeout=60)
        if rc != 0:
            fail("hammer exited %d:\n%s" % (rc, open(err).read()))
        print("consoles/hammer.html rendered from a real scrape: %d requests, statuses %s, "
              "OK %s, server RSS %s, %s" % (sent, statuses, cell("hm-ok"), cell("hm-rss"),
                                            cell("hm-leak")))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
