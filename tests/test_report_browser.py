#!/usr/bin/env python3
"""hammer's HTML reports in a real browser: a run's report (--html) and a
matrix report (hammer matrix --html), rendered by headless Chromium, at
1280 px and at a phone's 390 px.

Asserted in the rendered DOM, after layout:
  - every chart the page promises is there with the expected series, and
    each series was drawn (a non-empty box inside its chart); the
    histogram's bars, the response-time bands and the partial last
    interval's dotted steps too; a clean run has no errors chart;
  - nothing makes the page wider than the window (wide tables and charts
    scroll inside their own boxes), at 1280 px and on the phone;
  - in the matrix tables, every "median (min-max)" figure sits on one line.

Exit 0 pass, 1 fail, 77 skip (no Chromium, or it cannot start).
argv: HAMMER BENCH_APP
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
import cdp  # noqa: E402

# Every chart with its kind and series, and each series' drawn box.
CHARTS_JS = r"""
[...document.querySelectorAll('svg.chart')].map(svg => {
  const box = svg.getBoundingClientRect();
  return {
    kind: svg.dataset.chart,
    width: box.width, height: box.height,
    series: [...svg.querySelectorAll('.series')].map(el => {
      const b = el.getBoundingClientRect();
      return {name: el.dataset.series, points: +(el.dataset.points || 0),
              width: b.width, height: b.height,
              inside: b.left >= box.left - 1 && b.right <= box.right + 1 &&
                      b.top >= box.top - 1 && b.bottom <= box.bottom + 1};
    })
  };
})
"""

# The time charts that mark their last point as partial, and whether each
# drew its dotted steps.
PARTIAL_JS = r"""
[...document.querySelectorAll('svg.chart')].filter(svg => svg.querySelector('[data-partial-last]'))
  .map(svg => ({kind: svg.dataset.chart,
                drawn: [...svg.querySelectorAll('polyline.partial')]
                         .some(p => p.getBoundingClientRect().width > 0)}))
"""

# How many lines each figure cell of the tables takes.
CELL_LINES_JS = r"""
[...document.querySelectorAll('td.n')].map(td => {
  const r = document.createRange();
  r.selectNodeContents(td);
  const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
  return {text: td.textContent, lines: tops.size};
})
"""

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def run(*argv, ok=(0,)):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=300)
    if p.returncode not in ok:
        print(p.stdout)
        sys.exit("%s exited %d" % (argv[0], p.returncode))
    return p.stdout


def charts_by_kind(charts):
    out = {}
    for c in charts:
        out.setdefault(c["kind"], []).append(c)
    return out


def check_drawn(chart, names, where):
    got = {s["name"]: s for s in chart["series"]}
    for name in names:
        s = got.get(name)
        check(s is not None, "%s: chart %s lacks series %r (has %s)"
              % (where, chart["kind"], name, sorted(got)))
        if s is None:
            continue
        check(s["width"] > 0 or s["height"] > 0, "%s: %s/%s was not drawn" % (where, chart["kind"], name))
        check(s["inside"], "%s: %s/%s leaves its chart" % (where, chart["kind"], name))


def check_run_report(b, url):
    b.open(url, 1280)
    kinds = charts_by_kind(b.eval(CHARTS_JS))
    for kind in ("percentiles", "throughput", "latency", "gauges", "in-flight", "histogram"):
        check(kind in kinds, "run report: no %s chart (has %s)" % (kind, sorted(kinds)))
    if "percentiles" in kinds:
        pct = kinds["percentiles"][0]
        check_drawn(pct, ["action", "action → patch", "connect"], "run report")
        action = next((s for s in pct["series"] if s["name"] == "action"), None)
        # -d 3.5s: thousands of actions even under a sanitizer, so the curve
        # reaches 99.9% with more than the old 13 points (10 per "nine")
        check(action and action["points"] > 25, "run report: the action curve has few points")
        check(pct["width"] >= 1000, "run report: the distribution is %d px wide at 1280"
              % pct["width"])
    if "throughput" in kinds:
        check_drawn(kinds["throughput"][0], ["sent per second", "OK per second"], "run report")
    if "latency" in kinds:
        check_drawn(kinds["latency"][0], ["p50", "p90", "p99"], "run report")
    if "gauges" in kinds:
        check_drawn(kinds["gauges"][0], ["virtual users (senders)", "SSE streams open"],
                    "run report")
    if "in-flight" in kinds:
        check_drawn(kinds["in-flight"][0], ["requests in flight"], "run report")
    if "histogram" in kinds:
        check_drawn(kinds["histogram"][0], ["action"], "run report")
        bars = b.eval("[...document.querySelectorAll('svg[data-chart=histogram] rect')]"
                      ".filter(r => r.getBoundingClientRect().height > 0).length")
        check(bars >= 2, "run report: the histogram has %d visible bars" % bars)
    check("errors" not in kinds, "run report: a clean run draws an errors chart")
    check(not b.eval("[...document.querySelectorAll('figcaption')]"
                     ".some(c => c.textContent.startsWith('Errors per second'))"),
          "run report: a clean run has an (empty) errors-per-second panel")
    check(b.eval("!!document.querySelector('.no-errors')"), "run report: no 'no errors' line")
    # the last, partial interval: a dotted step to a hollow point in each time chart
    partial = b.eval(PARTIAL_JS)
    check(partial and all(p["drawn"] for p in partial),
          "run report: the partial last interval is not drawn as partial: %s" % partial)
    bands = b.eval("[...document.querySelectorAll('svg[data-chart=latency] polygon.band')]"
                   ".filter(p => p.getBoundingClientRect().height > 0).length")
    check(bands >= 3, "run report: %d response-time bands drawn" % bands)
    for h2 in ("Status codes", "By request kind", "Latency histogram"):
        check(b.eval("[...document.querySelectorAll('h2')].some(h => h.textContent == %s)"
                     % json.dumps(h2)), "run report: no section %s" % h2)
    width = b.eval("document.documentElement.scrollWidth")
    check(width <= 1280, "run report: the page is %d px wide at 1280" % width)
    print("run report at 1280 px: %s" % ", ".join(
        "%s (%s)" % (k, ", ".join(s["name"] for s in v[0]["series"])) for k, v in kinds.items()))


def check_matrix_report(b, url, profiles):
    b.open(url, 1280)
    kinds = charts_by_kind(b.eval(CHARTS_JS))
    check("throughput" in kinds and "percentiles" in kinds,
          "matrix report: charts %s" % sorted(kinds))
    for chart in kinds.get("throughput", []):
        check_drawn(chart, ["%s · %s" % (p, pas) for p in profiles for pas in ("warm", "cold")],
                    "matrix report")
    for chart in kinds.get("percentiles", []):
        check_drawn(chart, ["%s %s" % (p, pas) for p in profiles for pas in ("warm", "cold")],
                    "matrix report")
        for s in chart["series"]:
            check(s["points"] > 13, "matrix report: curve %s has %d points"
                  % (s["name"], s["points"]))
    cells = b.eval(CELL_LINES_JS)
    check(len(cells) > 0, "matrix report: no figure cells")
    wrapped = [c for c in cells if c["lines"] != 1]
    check(not wrapped, "matrix report: figures wrap at 1280 px: %s" % wrapped[:5])
    width = b.eval("document.documentElement.scrollWidth")
    check(width <= 1280, "matrix report: the page is %d px wide at 1280" % width)
    print("matrix report at 1280 px: %d charts; %d figure cells, each on one line"
          % (sum(len(v) for v in kinds.values()), len(cells)))


def check_phone(b, url, what):
    b.open(url, 390, 844, mobile=True)
    width = b.eval("document.documentElement.scrollWidth")
    check(width <= 391, "%s: the page is %d px wide on a 390 px phone" % (what, width))
    font = b.eval("parseFloat(getComputedStyle(document.body).fontSize)")
    check(font >= 13, "%s: body text is %s px on a phone" % (what, font))
    charts = b.eval(CHARTS_JS)
    narrow = [c["kind"] for c in charts if c["width"] < 500]
    check(not narrow, "%s: charts squeezed below 500 px on a phone: %s" % (what, narrow))
    print("%s at 390 px: no horizontal overflow, %.0f px text, charts scroll at full size"
          % (what, font))


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: test_report_browser.py HAMMER BENCH_APP")
    hammer, bench_app = sys.argv[1], sys.argv[2]
    exe = cdp.find_chromium()
    if not exe:
        print("skip: Chromium is not installed (Debian package chromium; scripts/deps.sh "
              "lists it as optional)")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="hm_browser_")
    try:
        run_html, run_json = os.path.join(tmp, "run.html"), os.path.join(tmp, "run.json")
        # 3.5 s: the last interval is half of one whatever the machine's load
        # (at 3 s the run's end falls on a tick, and the last interval is a
        # sliver or a whole second by a few ms either way)
        run(hammer, "-q", "-d", "3.5s", "-c", "20", "--html", run_html, "--json", run_json,
            "scenario", "counter")
        ini = os.path.join(tmp, "m.ini")
        with open(ini, "w") as f:
            f.write("[matrix]\nruns = 2\nactions = 800\nconcurrency = 20\nbaseline = io_uring\n"
                    "[profile io_uring]\ncommand = '%s' --port {port}\nhealth = /_health\n"
                    "[profile epoll]\ncommand = '%s' --port {port} --engine epoll\n"
                    "health = /_health\n[workload counter]\nscenario = counter\n"
                    % (bench_app, bench_app))
        matrix_html = os.path.join(tmp, "matrix.html")
        run(hammer, "matrix", "-q", "--html", matrix_html, "--logs", os.path.join(tmp, "logs"),
            ini, ok=(0, 1))
        try:
            b = cdp.Browser(exe)
            b.call("Browser.getVersion", session=False)
        except (RuntimeError, TimeoutError, OSError) as e:
            print("skip: Chromium does not start here: %s" % e)
            sys.exit(77)
        try:
            check_run_report(b, "file://" + run_html)
            check_matrix_report(b, "file://" + matrix_html, ["io_uring", "epoll"])
            check_phone(b, "file://" + run_html, "run report")
            check_phone(b, "file://" + matrix_html, "matrix report")
        finally:
            b.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        sys.exit(1)


if __name__ == "__main__":
    main()
