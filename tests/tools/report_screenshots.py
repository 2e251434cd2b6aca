#!/usr/bin/env python3
"""`make report-screenshots`: a run's report and a matrix report, measured
here and now against the embedded bench_app, rendered by headless Chromium
at 1280 px into OUT_DIR/report.png and OUT_DIR/matrix.png (docs/img/).

usage: report_screenshots.py HAMMER BENCH_APP OUT_DIR
"""

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

WIDTH = 1280


def run(*argv):
    print("  " + " ".join(os.path.basename(a) if a.startswith("/") else a for a in argv),
          flush=True)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=900)
    if p.returncode not in (0, 1):
        print(p.stdout)
        sys.exit("%s exited %d" % (argv[0], p.returncode))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    hammer, bench_app, out = sys.argv[1:4]
    exe = cdp.find_chromium()
    if not exe:
        sys.exit("Chromium is not installed (Debian package chromium)")
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="hm_shots_")
    try:
        run_html = os.path.join(tmp, "report.html")
        # browser VUs with think time: a run whose curves have something to show
        run(hammer, "-q", "-d", "20s", "-c", "100", "--mode", "browser", "--think", "5ms..50ms",
            "--html", run_html, "scenario", "counter")
        ini = os.path.join(tmp, "matrix.ini")
        with open(ini, "w") as f:
            f.write("[matrix]\nruns = 3\nactions = 5000\nconcurrency = 100\n"
                    "baseline = 1-worker\n")
            for name, args in (("1-worker", "--workers 1"),
                               ("1-worker-epoll", "--workers 1 --engine epoll"),
                               ("2-workers", "--workers 2 --dispatch session")):
                f.write("[profile %s]\ncommand = '%s' --port {port} %s\nhealth = /_health\n"
                        % (name, bench_app, args))
            f.write("[workload counter]\nscenario = counter\n[workload io]\nscenario = io\n")
        matrix_html = os.path.join(tmp, "matrix.html")
        run(hammer, "matrix", "-q", "--html", matrix_html, "--logs", os.path.join(tmp, "logs"),
            ini)
        b = cdp.Browser(exe)
        try:
            for html, png in ((run_html, "report.png"), (matrix_html, "matrix.png")):
                b.open("file://" + html, WIDTH)
                height = b.screenshot(os.path.join(out, png), WIDTH)
                print("%s: %d x %d" % (os.path.join(out, png), WIDTH, height))
        finally:
            b.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
