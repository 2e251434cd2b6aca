#!/usr/bin/env python3
"""`make screenshots`: refreshes the pictures of docs/ from real runs here
and now, against the embedded bench_app, rendered by headless Chromium:

  live-view.png        the full-screen live view (docs/live-view.md): hammer
                       in a 120x40 tmux terminal, its screen read with
                       `tmux capture-pane -e` 6 s in and drawn as HTML
  report.png           a run's HTML report and a matrix report
  matrix.png           (docs/reports.md; tests/tools/report_screenshots.py)
  metrics-console.png  deploy/prometheus/consoles/hammer.html in a real
                       Prometheus scraping a running hammer (docs/metrics.md)

usage: scripts/screenshots.py [BUILD_DIR [OUT_DIR [PART...]]]
       (build, docs/img; PART: live-view, console, reports; default all)
Needs chromium, tmux and prometheus (Debian packages; scripts/deps.sh).
The live view's text is printed too, for docs/live-view.md's capture.
"""

import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLS, ROWS = 120, 40
LIBRARIES = ("/usr/share/doc/prometheus/examples/console_libraries",
             "/etc/prometheus/console_libraries")


def need(tool):
    path = shutil.which(tool)
    if not path:
        sys.exit("%s is not installed (Debian package %s; scripts/deps.sh)" % (tool, tool))
    return path


def chromium_png(url, png, width, height, wait_ms=0):
    """Renders url at width x height into png with `chromium --headless
    --screenshot` (wait_ms of virtual time for the page's scripts)."""
    argv = [need("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--force-device-scale-factor=1", "--window-size=%d,%d" % (width, height),
            "--screenshot=" + png]
    if wait_ms:
        argv.append("--virtual-time-budget=%d" % wait_ms)
    subprocess.run(argv + [url], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=300)
    print("%s: %d x %d" % (png, width, height))


# ---- the live view ------------------------------------------------------------

SGR_COLOURS = ["#000", "#c33", "#3a3", "#cc3", "#46c", "#c3c", "#3cc", "#ddd"]


def ansi_to_html(text):
    """tmux capture-pane -e's SGR sequences (bold, reverse, 8/16 colours) as spans."""
    out, bold, rev, fg, bg = [], False, False, None, None
    for part in re.split(r"(\x1b\[[0-9;]*m)", text):
        m = re.fullmatch(r"\x1b\[([0-9;]*)m", part)
        if not m:
            if part:
                style = []
                f, b = (bg or "#111", fg or "#ddd") if rev else (fg, bg)
                if bold:
                    style.append("font-weight:bold")
                if f:
                    style.append("color:" + f)
                if b:
                    style.append("background:" + b)
                t = html.escape(part)
                out.append('<span style="%s">%s</span>' % (";".join(style), t) if style else t)
            continue
        codes = [int(c) for c in m.group(1).split(";") if c] or [0]
        for c in codes:
            if c == 0:
                bold, rev, fg, bg = False, False, None, None
            elif c == 1:
                bold = True
            elif c == 22:
                bold = False
            elif c == 7:
                rev = True
            elif c == 27:
                rev = False
            elif 30 <= c <= 37:
                fg = SGR_COLOURS[c - 30]
            elif 90 <= c <= 97:
                fg = SGR_COLOURS[c - 90]
            elif c == 39:
                fg = None
            elif 40 <= c <= 47:
                bg = SGR_COLOURS[c - 40]
            elif c == 49:
                bg = None
    return "".join(out)


def live_view(hammer, tmp, out):
    tmux = need("tmux")
    sock = "hammer-shots-%d" % os.getpid()

    def t(*args):
        return subprocess.run([tmux, "-L", sock, "-f", "/dev/null"] + list(args), check=True,
                              capture_output=True, text=True).stdout

    cmd = "%s -c 64 -d 10s scenario counter; sleep 100000" % hammer
    t("new-session", "-d", "-s", "t", "-x", str(COLS), "-y", str(ROWS), "env", "TERM=xterm",
      "sh", "-c", cmd)
    try:
        # 6 s into the run, as docs/live-view.md says
        while not re.search(r"^hammer counter\s+6\.\d+s", t("capture-pane", "-p", "-t", "t"),
                            re.M):
            time.sleep(0.05)
        coloured = t("capture-pane", "-p", "-e", "-t", "t")
        plain = t("capture-pane", "-p", "-t", "t")
    finally:
        subprocess.run([tmux, "-L", sock, "kill-server"], capture_output=True)
    page = os.path.join(tmp, "live-view.html")
    with open(page, "w") as f:
        f.write("<!doctype html><meta charset=utf-8><style>body{margin:0;background:#111}"
                "pre{margin:0;padding:12px 14px;color:#ddd;font:14px/17px 'DejaVu Sans Mono',"
                "monospace}</style><pre>%s</pre>" % ansi_to_html(coloured.rstrip("\n")))
    chromium_png("file://" + page, os.path.join(out, "live-view.png"), 1040, ROWS * 17 + 24)
    print("the live view's text (docs/live-view.md):\n" + "\n".join(
        line.rstrip() for line in plain.rstrip("\n").split("\n")))


# ---- the Prometheus console ---------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=30) as r:
            return r.status, r.read().decode()
    except OSError:
        return 0, ""


def console(hammer, tmp, out):
    prometheus = need("prometheus")
    libs = next((d for d in LIBRARIES if os.path.exists(os.path.join(d, "prom.lib"))), None)
    if not libs:
        sys.exit("the console library of Debian's prometheus (prom.lib) is missing")
    err = os.path.join(tmp, "hammer.err")
    procs = []
    try:
        # browser VUs with think time, a minute: curves with something to show
        with open(err, "w") as e:
            procs.append(subprocess.Popen(
                [hammer, "-q", "-d", "60s", "-c", "50", "--mode", "browser", "--think",
                 "5ms..50ms", "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "300s",
                 "scenario", "counter"],
                stdout=subprocess.DEVNULL, stderr=e, stdin=subprocess.DEVNULL))
        while "path /metrics" not in open(err).read():
            time.sleep(0.1)
        mport = int(re.search(r"metrics on port (\d+)", open(err).read()).group(1))
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
                    "  - job_name: hammer\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % mport)
        pport = free_port()
        procs.append(subprocess.Popen(
            [prometheus, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(tmp, "db"),
             "--web.listen-address=127.0.0.1:%d" % pport,
             "--web.console.templates=" + os.path.join(ROOT, "deploy/prometheus/consoles"),
             "--web.console.libraries=" + libs],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL))
        while get(pport, "/-/ready")[0] != 200:
            time.sleep(0.1)
        # 45 scrapes of the run (the linger keeps the endpoint up if Prometheus
        # started late)
        q = "/api/v1/query?" + urllib.parse.urlencode(
            {"query": "count_over_time(hammer_requests_total{job='hammer'}[2m])"})
        while True:
            body = json.loads(get(pport, q)[1] or "{}")
            res = body.get("data", {}).get("result", [])
            if res and float(res[0]["value"][1]) >= 45:
                break
            time.sleep(0.5)
        hash_ = urllib.parse.quote(json.dumps({"duration": 60, "endTime": 0}))
        chromium_png("http://127.0.0.1:%d/consoles/hammer.html?range=15s#pctc%s" % (pport, hash_),
                     os.path.join(out, "metrics-console.png"), 1280, 2550, wait_ms=10000)
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    out = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "docs/img"))
    hammer = os.path.join(build, "bin", "hammer")
    bench_app = os.path.join(build, "bin", "bench_app")
    parts = sys.argv[3:] or ["live-view", "console", "reports"]
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="hm_screenshots_")
    try:
        if "live-view" in parts:
            live_view(hammer, tmp, out)
        if "console" in parts:
            console(hammer, tmp, out)
        if "reports" in parts:
            subprocess.run([sys.executable,
                            os.path.join(ROOT, "tests/tools/report_screenshots.py"), hammer,
                            bench_app, out], check=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
