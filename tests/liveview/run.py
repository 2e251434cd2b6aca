#!/usr/bin/env python3
"""The live view on a real terminal: hammer runs in a detached tmux session
of a fixed size, the test reads the screen with `tmux capture-pane -p` and
types with `tmux send-keys`.

  run.py --hammer PATH CASE      CASE: screen, stalled, failures, pipe

screen:  the embedded bench_app under `scenario counter`: the screen holds
         its labels and a rate above 0; q ends the run as Ctrl-C does
         (Interrupted, PASS, exit 0).
stalled: tests/misbehave/server.py never reads the senders' connections:
         in flight > 0, "since last completion" grows; after q the screen
         says "stopping: waiting for N in flight" and the run ends once
         --timeout expired.
failures: every action answers 500: the status count, failed = sent, OK
         0.00% and the latest failure's reason are on the screen.
histogram: on a terminal too short for every bucket, the latency
         histogram's rows still add up to every sample (the fast end folded
         into its first "<=" row), not fewer than "run to last tick" counts;
         the server's RSS in bytes (MiB), not 1.19726e+07.
ctrl_c:  Ctrl-C typed on the terminal (not q) ends the run as it does
         without the view: Interrupted, PASS, exit 0, the terminal restored
         (the summary on the normal screen, the view's labels gone).
pipe:    with stdout piped, hammer writes no escape sequence; --no-tui on
         the terminal keeps the live line.

No wall-clock bound: every wait polls the screen for what it expects and is
bounded by the run's own -d and --timeout (and ctest's TIMEOUT).
Exits 77, saying why, when tmux is missing.
"""

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "misbehave", "server.py")
COLS, ROWS = 120, 40


class Term:
    """One tmux server of our own (its own socket) with one session."""

    count = 0

    def __init__(self, command, rows=ROWS):
        # A socket per session: a server being killed never takes the next one.
        Term.count += 1
        self.sock = "hammer-liveview-%d-%d" % (os.getpid(), Term.count)
        # The shell stays after hammer so its exit status can be read; a
        # Ctrl-C typed on the terminal reaches the shell too, which goes on
        # (as an interactive one would) while hammer, reset to the default
        # at exec, handles it.
        sh = "trap : INT; %s; echo HAMMER_EXIT=$?; sleep 100000" % command
        self.tmux("new-session", "-d", "-s", "t", "-x", str(COLS), "-y", str(rows),
                  "sh", "-c", sh)

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null"] + list(args),
                              check=True, capture_output=True, text=True).stdout

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "t")

    def history(self):
        return self.tmux("capture-pane", "-p", "-t", "t", "-S", "-1000")

    def keys(self, *k):
        self.tmux("send-keys", "-t", "t", *k)

    def wait(self, pattern, within_s, what, whole=False):
        """Polls the screen until pattern matches; fails after within_s."""
        end = time.monotonic() + within_s
        while True:
            text = self.history() if whole else self.screen()
            m = re.search(pattern, text, re.M)
            if m:
                return m, text
            if time.monotonic() > end:
                fail("%s: /%s/ not on the screen within %.0f s; screen:\n%s" %
                     (what, pattern, within_s, text))
            time.sleep(0.1)

    def close(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def exit_status(term, within_s):
    m, text = term.wait(r"^HAMMER_EXIT=(\d+)", within_s, "hammer's exit", whole=True)
    return int(m.group(1)), text


LABELS = ["Rate", "actions/s", "OK", "So far", "In flight", "VUs", "SSE open", "since last completion",
          "p50", "p90", "p99", "max", "last interval", "run to last tick", "Latency histogram",
          "Status codes", "No response", "Latest", "Server", "q quit", "p pause"]


def case_screen(hammer):
    d = 20  # long enough that q, not -d, ends it
    cmd = "%s -t 1 -c 4 -d %ds --timeout 2s scenario counter" % (shlex.quote(hammer), d)
    term = Term(cmd)
    try:
        # The first tick (1 s) gives a rate; the set-up (embedded bench_app) comes first.
        m, text = term.wait(r"^Rate +(\d+) actions/s +OK ([\d.]+)%", d, "a rate")
        for label in LABELS:
            if label not in text:
                fail("label %r missing; screen:\n%s" % (label, text))
        if int(m.group(1)) <= 0:
            fail("rate %s is not above 0:\n%s" % (m.group(1), text))
        if not re.search(r"^Status codes +200 \d+", text, re.M):
            fail("no 200 count:\n%s" % text)
        if "\x1b" in text or re.search(r"^\[ +\d+\.\ds\]", text, re.M):
            fail("the live line is on the screen, not the view:\n%s" % text)
        # p freezes the screen: the clock stays while the run goes on.
        term.keys("p")
        term.wait(r"PAUSED", 5, "the PAUSED mark")
        a = re.search(r"^hammer counter +([\d.]+)s", term.screen(), re.M).group(1)
        time.sleep(0.6)  # more than two refreshes (250 ms)
        b = re.search(r"^hammer counter +([\d.]+)s", term.screen(), re.M).group(1)
        if a != b:
            fail("the screen moved while paused: %s then %s" % (a, b))
        term.keys("p")
        term.wait(r"^hammer counter +(?!%s)[\d.]+s" % re.escape(b), 5, "the clock after resume")
        term.keys("q")
        rc, text = exit_status(term, d + 2 * 2 + 10)
        if rc != 0:
            fail("exit %d after q, not 0:\n%s" % (rc, text))
        for pat in (r"^Interrupted +after \d+\.\d s", r"^Result +PASS"):
            if not re.search(pat, text, re.M):
                fail("summary lacks /%s/:\n%s" % (pat, text))
        print("ok: labels, rate %s, pause, q -> Interrupted, exit 0" % m.group(1))
    finally:
        term.close()


def case_stalled(hammer):
    srv = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--mode", "never-read",
                            "--good-conns", "3"], stdout=subprocess.PIPE, text=True)
    port = srv.stdout.readline().strip()
    if not port.isdigit():
        srv.kill()
        fail("server.py did not start: %r" % port)
    timeout = 6
    cmd = "%s --url http://127.0.0.1:%s -t 1 -c 4 -d 60s --timeout %ds --no-server-watch scenario counter" % (
        shlex.quote(hammer), port, timeout)
    term = Term(cmd)
    try:
        idle = r"since last completion (\d+)s"
        m, text = term.wait(r"^In flight +([1-9]\d*) ", timeout, "in flight > 0")
        m1, _ = term.wait(r"since last completion ([1-9]\d*)s", timeout, "idle of 1 s or more")
        first = int(m1.group(1))
        end = time.monotonic() + timeout
        while True:
            m2, text = term.wait(idle, timeout, "the idle time")
            if int(m2.group(1)) > first:
                break
            if time.monotonic() > end:
                fail("idle stayed at %d s for %d s:\n%s" % (first, timeout, text))
            time.sleep(0.1)
        if not re.search(r"^In flight +[1-9]", text, re.M):
            fail("in flight not above 0 while nothing completes:\n%s" % text)
        term.keys("q")
        m, text = term.wait(r"stopping: waiting for ([1-9]\d*) in flight \(up to \d+ s\)",
                            timeout, "the stopping wording")
        rc, text = exit_status(term, timeout * 3)
        if not re.search(r"^Interrupted +after \d+\.\d s", text, re.M):
            fail("summary lacks Interrupted:\n%s" % text)
        if rc != 1:
            fail("exit %d, not 1 (the actions in flight timed out):\n%s" % (rc, text))
        print("ok: in flight, idle %d -> %s s, stopping: waiting for %s, exit 1" %
              (first, m2.group(1), m.group(1)))
    finally:
        term.close()
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(5)
        except subprocess.TimeoutExpired:
            srv.kill()


def case_failures(hammer):
    srv = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--mode", "all-500"],
                           stdout=subprocess.PIPE, text=True)
    port = srv.stdout.readline().strip()
    if not port.isdigit():
        srv.kill()
        fail("server.py did not start: %r" % port)
    d = 20
    cmd = "%s --url http://127.0.0.1:%s -t 1 -c 4 -d %ds --timeout 2s --no-server-watch " \
          "scenario counter" % (shlex.quote(hammer), port, d)
    term = Term(cmd)
    try:
        m, text = term.wait(r"^Status codes +500 ([1-9]\d*)", d, "the 500s counted")
        term.wait(r"^Latest +answered HTTP 500: Internal Server Error \(\d+s ago\)", d,
                  "the latest failure's reason")
        m, text = term.wait(r"^So far +sent (\d+) +ok 0 +failed (\d+)", d, "failed counted")
        if m.group(1) != m.group(2) or m.group(1) == "0":
            fail("sent %s, failed %s: every action answered 500:\n%s" %
                 (m.group(1), m.group(2), text))
        term.wait(r"^Rate +\d+ actions/s +OK 0\.00%", d, "OK 0.00% after a tick")
        term.keys("q")
        rc, text = exit_status(term, d + 2 * 2 + 10)
        if rc != 1:
            fail("exit %d, not 1:\n%s" % (rc, text))
        print("ok: 500s counted, latest reason shown, exit 1")
    finally:
        term.close()
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(5)
        except subprocess.TimeoutExpired:
            srv.kill()


def case_histogram(hammer):
    d = 20
    cmd = "%s -t 1 -c 4 -d %ds --timeout 2s scenario counter" % (shlex.quote(hammer), d)
    term = Term(cmd, rows=26)  # room for a row or two of the histogram
    try:
        # every server field on the screen (its rows settled) and a tick's samples
        term.wait(r"process_threads", d, "the server's resources")
        # A capture can catch a frame half drawn (its upper rows new, the
        # histogram's still the frame before, which a slow build shows), so
        # a short count must hold on three captures in a row to fail.
        for attempt in range(3):
            m, text = term.wait(r"^  run to last tick .* (\d+)\s*$", d, "the run's samples")
            while int(m.group(1)) == 0:
                m, text = term.wait(r"^  run to last tick .* (\d+)\s*$", d, "the run's samples")
            rows = re.findall(
                r"^  (?:<=|  ) +[\d.]+(?:us|ms|s)? +#* +(\d+)\s*$|^     +more +#* +(\d+)\s*$",
                text, re.M)
            shown = sum(int(a or b) for a, b in rows)
            run = int(m.group(1))
            if rows and shown >= run:
                break
            time.sleep(0.3)
        if not rows:
            fail("no histogram row on the screen:\n%s" % text)
        if shown < run:
            fail("the histogram's %d rows add up to %d, fewer than the %d samples of the run "
                 "to the last tick, on three captures in a row:\n%s" %
                 (len(rows), shown, run, text))
        # a memory figure reads as one
        if not re.search(r"process_resident_bytes +[\d.]+ [KMG]iB ", text):
            fail("the server's RSS is not in bytes:\n%s" % text)
        term.keys("q")
        rc, text = exit_status(term, d + 2 * 2 + 10)
        if rc != 0:
            fail("exit %d after q, not 0:\n%s" % (rc, text))
        print("ok: %d histogram row(s) hold %d samples (run to last tick: %d)" %
              (len(rows), shown, run))
    finally:
        term.close()


def case_ctrl_c(hammer):
    d = 20  # long enough that Ctrl-C, not -d, ends it
    cmd = "%s -t 1 -c 4 -d %ds --timeout 2s scenario counter" % (shlex.quote(hammer), d)
    term = Term(cmd)
    try:
        # work done (a rate above 0): the set-up is over, Ctrl-C stops a running pass
        term.wait(r"^Rate +[1-9]\d* actions/s", d, "a rate above 0")
        term.keys("C-c")  # the terminal's interrupt character, as a user types it
        rc, text = exit_status(term, d + 2 * 2 + 10)
        if rc != 0:
            fail("exit %d after Ctrl-C, not 0:\n%s" % (rc, text))
        for pat in (r"^Interrupted +after \d+\.\d s", r"^Result +PASS"):
            if not re.search(pat, text, re.M):
                fail("summary lacks /%s/:\n%s" % (pat, text))
        if "q quit (as Ctrl-C" in term.screen():
            fail("the view is still on the screen after the run:\n%s" % term.screen())
        print("ok: Ctrl-C -> Interrupted, PASS, exit 0, the terminal restored")
    finally:
        term.close()


def case_pipe(hammer):
    tmp = tempfile.mkdtemp(prefix="hammer-liveview-")
    out = os.path.join(tmp, "out")
    # stdout piped (stdin and stderr stay the terminal's).
    cmd = "%s -t 1 -c 4 -d 2s --timeout 2s scenario counter | cat > %s" % (
        shlex.quote(hammer), shlex.quote(out))
    term = Term(cmd)
    try:
        rc, text = exit_status(term, 2 + 2 * 2 + 30)
        with open(out, "rb") as f:
            data = f.read()
        if b"\x1b" in data:
            fail("escape sequences on a piped stdout: %r" % data[:400])
        if not re.search(rb"^Result +PASS", data, re.M):
            fail("no summary on the pipe:\n%s" % data.decode(errors="replace"))
        if "Latency histogram" in text:
            fail("the view drew on the terminal though stdout was a pipe:\n%s" % text)
    finally:
        term.close()
    # --no-tui: the live line on the terminal, no view.
    term = Term("%s -t 1 -c 4 -d 2s --timeout 2s --no-tui scenario counter" %
                shlex.quote(hammer))
    try:
        rc, text = exit_status(term, 2 + 2 * 2 + 30)
        if not re.search(r"^\[ +\d+\.\ds\] +\d+ actions/s", text, re.M):
            fail("--no-tui: no live line:\n%s" % text)
        if "Latency histogram" in text or "q quit" in text:
            fail("--no-tui drew the view:\n%s" % text)
    finally:
        term.close()
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok: piped stdout has no escape sequence; --no-tui keeps the live line")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hammer", required=True)
    ap.add_argument("case", choices=["screen", "stalled", "failures", "histogram", "ctrl_c", "pipe"])
    a = ap.parse_args()
    if not shutil.which("tmux"):
        print("SKIP: tmux not found (apt-get install tmux): the live view needs a terminal")
        sys.exit(77)
    {"screen": case_screen, "stalled": case_stalled, "failures": case_failures,
     "histogram": case_histogram, "ctrl_c": case_ctrl_c, "pipe": case_pipe}[a.case](a.hammer)


if __name__ == "__main__":
    main()
