#!/usr/bin/env python3
"""The consistency suite: the same work through every path hammer has must
give the same accounting. One path is one way of doing a php-via
scenario's work: the built-in scenario or its flow (examples/flows/), in
the hammer or the browser load model, over HTTP/1.1 or HTTP/2, plain or
TLS, against bench_app, with or without a server restart mid-run. Each
path is one ctest (tests/consistency.cmake), named for it:

    consistency_<scenario>_<builtin|flow>_<hammer|browser>_<h1|h2>_<plain|tls>[_restart]
    consistency_sticky_builtin_h1_<plain|tls>   (sticky: no flow, its own model)

and each of them again with the suffix _epoll on the epoll engine (the
plain name runs the default engine, io_uring where the kernel has it).

What every path asserts, from the run's --json (docs/output.md):
  - accounting: actions.sent = ok + failed + the requests in flight at the
    end (the last interval's gauge), and sent = the answers by status plus
    the requests that got no answer (errors.*);
  - patches counted once per action: patches.observed = the OK actions the
    streams showed (bench_app patches every action once), so events that
    open a stream (the page's state) are never patches; action->patch timed
    once per patch;
  - SSE: sse.opened >= the observers connected >= 1 (a stream that showed
    its state was opened), no SSE failure on a run without a restart;
  - connections: every one established is one connect timed and, over
    TLS, one handshake counted (full + resumed, each timed, or unfinished
    or failed), the SSE streams' connections too;
  - the check: the built-in's name and verdict (PASS) for the built-in and
    its flow alike, on a net increment that matches HTTP OK where the
    workload counts.
With a restart: contexts lost and reloaded, the outage window reported and
well-formed, OK actions after it, the check still PASS on the newest
context, the same accounting.

Why these restart paths and not all 64 more: what a restart exercises —
finding a context lost, reloading the page with its cookies, the back-off,
following the new context's stream, the lenient check of the lost one — is
the load model's and the protocol's (HTTP/2 shares one connection per tab;
HTTP/1.1 reconnects per connection), not the workload's (the page, action
and check are data) and not TLS's (it sits under the connection). So the
restart runs every source x model x protocol on counter (its net-increment
check is the strictest: every context's count must match its OK actions),
plus TLS for each source and model over HTTP/1.1, which covers a TLS
reconnect after the outage.

Drift cases, named consistency_drift_*: each re-states one place where a
built-in and its flow differed —
  flow_hammer_reload      a hammer-model flow reloads a lost context (it had
                          no reload: 400 to the end, check FAIL);
  caught_up_nothing_ok    the end's caught-up rule is one: with no OK action
                          the built-in cpu waited out --timeout, its flow not;
  flow_hammer_sse_opened  a hammer-model flow counts the stream it opened;
  import_har_patches      an imported HAR flow counts one patch per OK
                          action, its streams' opening events apart;
  first_page_outage       a tab's first page meeting a server that is away
                          is reloaded with the back-off, in a flow's page
                          step as in the built-in tab (the flow's stopped).

Runs are small and bounded: -c 4, -n 40 (hammer model: -n 60), --timeout
10s (far above what a loaded machine needs: these check results, not
speed); a restart run has -d of 4 s plus four times what starting
bench_app took at the test's start (a baseline of the same test, so a
slow machine gets a longer run), and bench_app is restarted once it
served 100 requests, a few dozen ms into the run.

usage: run_path.py --hammer H --bench-app B --certs-script S --examples D
                   --data D --misbehave D PATH...
       run_path.py --list
Exit 0 when every check of every path held, 1 otherwise.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import local_server  # noqa: E402

SCENARIOS = ("counter", "cpu", "io", "spreadsheet")
# The built-in scenario's check (its name in the JSON) and whether it counts.
CHECKS = {
    "counter": ("net increment equals HTTP OK", True),
    "cpu": ("every patched count equals 65451", False),
    "io": ("net increment equals HTTP OK", True),
    "spreadsheet": ("net increment equals HTTP OK; viewRow = focusRow = count mod 100", True),
}
TIMEOUT = "10s"
RESTART_RUN_S = 4.0  # -d of a restart run on a machine that starts bench_app at once
RESTART_AT = 100  # requests bench_app served before it is restarted


def path_name(scenario, source, model, proto, sec, restart=False):
    return "%s_%s_%s_%s_%s%s" % (scenario, source, model, proto, sec, "_restart" if restart else "")


def all_paths():
    paths = {}
    for sc in SCENARIOS:
        for source in ("builtin", "flow"):
            for model in ("hammer", "browser"):
                for proto in ("h1", "h2"):
                    for sec in ("plain", "tls"):
                        paths[path_name(sc, source, model, proto, sec)] = dict(
                            scenario=sc, source=source, model=model, proto=proto, sec=sec,
                            restart=False)
    for source in ("builtin", "flow"):
        for model in ("hammer", "browser"):
            for proto, sec in (("h1", "plain"), ("h2", "plain"), ("h1", "tls")):
                paths[path_name("counter", source, model, proto, sec, True)] = dict(
                    scenario="counter", source=source, model=model, proto=proto, sec=sec,
                    restart=True)
    # sticky has no flow and a model of its own (its variants fix their own
    # connections) and needs workers that do not share contexts, which
    # bench_app's HTTP/2 refuses: HTTP/1.1, plain and TLS.
    for sec in ("plain", "tls"):
        paths["sticky_builtin_h1_" + sec] = dict(scenario="sticky", source="builtin", model=None,
                                                 proto="h1", sec=sec, restart=False)
    # Every path again on the epoll engine (the default, auto, is io_uring
    # where the kernel has it): the engines read, wait and time out by
    # different code, and the accounting must not depend on which.
    for name, p in list(paths.items()):
        paths[name + "_epoll"] = dict(p, engine="epoll")
    for name in DRIFTS:
        paths["drift_" + name] = dict(drift=name)
    return paths


# ---- bench_app and hammer ----------------------------------------------------


class App:
    """bench_app on one port, with TLS and HTTP/2 as the path asks."""

    def __init__(self, opts, port, tls, h2, certs, workers=1):
        self.argv = [opts.bench_app, "--port", str(port)]
        if workers > 1:  # as OpenSwoole dispatches by php-via's dispatch_func
            self.argv += ["--workers", str(workers), "--dispatch", "session"]
        if tls:
            self.argv += ["--tls-cert", os.path.join(certs, "server.pem"),
                          "--tls-key", os.path.join(certs, "server.key")]
        if h2:
            self.argv += ["--http2"]
        self.port, self.tls, self.certs = port, tls, certs
        self.p = None

    def start(self):
        self.p = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # How long this machine takes to start bench_app now: the baseline
        # a restart run's length is scaled by.
        self.start_s = local_server.wait_listening(self.p, self.port, "bench_app")

    def kill(self):
        if self.p and self.p.poll() is None:
            self.p.kill()
        if self.p:
            self.p.wait()

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def requests_served(self):
        """The sum of the workers' requests by /_health (0 when it does not answer)."""
        return local_server.requests_served(
            self.port, os.path.join(self.certs, "ca.pem") if self.tls else None)


class Run:
    def __init__(self, exit_code, out, doc, duration):
        self.exit, self.out, self.json, self.duration = exit_code, out, doc, duration

    def j(self, dotted, default=None):
        cur = self.json
        for part in dotted.split("."):
            if not isinstance(cur, dict) or part not in cur:
                return default
            cur = cur[part]
        return cur


def run_hammer(opts, args, fault=None):
    """Runs hammer with args (plus --json); fault(proc), if given, runs on a
    thread beside it. Returns a Run."""
    tmp = tempfile.mkdtemp(prefix="hammer-consistency-")
    jpath = os.path.join(tmp, "run.json")
    argv = [opts.hammer, "--no-tui", "--json", jpath] + args
    print("$ " + " ".join(argv), flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    th = None
    if fault:
        th = threading.Thread(target=fault, args=(p,), daemon=True)
        th.start()
    out = p.communicate()[0].decode("utf-8", "replace")
    duration = time.monotonic() - t0
    if th:
        th.join(30)
    doc = None
    try:
        with open(jpath) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        pass
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    print(out.rstrip())
    return Run(p.returncode, out, doc, duration)


def target_args(port, tls, h2, certs):
    args = ["--url", "%s://127.0.0.1:%d" % ("https" if tls else "http", port)]
    if tls:
        args += ["--cacert", os.path.join(certs, "ca.pem")]
    if h2:
        args += ["--http2"]
    return args


def engine_args(p):
    """--engine for a path that names one; none runs the default (auto)."""
    return ["--engine", p["engine"]] if p.get("engine") else []


def restart_run(app):
    """-d of a restart run: RESTART_RUN_S, plus four times what starting
    bench_app took here at the test's start (the restart starts it again,
    and hammer must see it back, reload and send on before -d ends, on a
    busy machine too)."""
    return "%.1fs" % (RESTART_RUN_S + 4 * app.start_s)


def work_args(opts, p, app):
    """The work of path p: the scenario or its flow, in p's model."""
    hammer = p["model"] == "hammer"
    size = ["-c", "4", "--timeout", TIMEOUT]
    if p["restart"]:
        size += ["-d", restart_run(app), "--interval", "1s"]
    else:
        size += ["-n", "60" if hammer else "40"]
    what = (["scenario", p["scenario"]] if p["source"] == "builtin" else
            ["flow", os.path.join(opts.examples, p["scenario"] + ".yaml")])
    return ["--mode", p["model"]] + size + what


def restart_fault(app):
    """Once hammer is under way (bench_app served RESTART_AT requests, a
    few dozen ms into the run), kills bench_app and starts it again on its
    port 0.3 s later; the run goes on to its -d (restart_run), seconds
    after the new bench_app answers. (Not -n: a fast run spends it before a busy
    machine schedules this thread. Not a SIGINT once the new one served
    enough: the check would then depend on whether the stream had
    reconnected when the Ctrl-C came.)"""

    def fault(proc):
        while proc.poll() is None and app.requests_served() < RESTART_AT:
            time.sleep(0.02)
        if proc.poll() is not None:
            return
        app.kill()
        time.sleep(0.3)
        app.start()

    return fault


# ---- what every path asserts ----------------------------------------------------


class Checks:
    def __init__(self):
        self.failed = []

    def that(self, ok, label, detail):
        print("%s  %-26s %s" % ("PASS" if ok else "FAIL", label, detail))
        if not ok:
            self.failed.append("%s: %s" % (label, detail))


def in_flight_at_end(r):
    iv = r.j("intervals") or []
    return iv[-1].get("in_flight", 0) if iv else 0


def check_accounting(c, r):
    sent, ok, failed = r.j("actions.sent"), r.j("actions.ok"), r.j("actions.failed")
    fl = in_flight_at_end(r)
    c.that(isinstance(sent, int) and sent == ok + failed + fl, "sent = ok + failed + in flight",
           "sent %r, ok %r, failed %r, in flight at the end %r" % (sent, ok, failed, fl))
    by = r.j("actions.by_status") or {}
    answered = sum(by.values())
    unanswered = sum((r.j("errors") or {}).values())
    ok_by = sum(n for s, n in by.items() if s.startswith("2"))
    c.that(answered + unanswered == sent - fl and ok_by == ok, "by status + errors = sent",
           "answered %d (2xx %d) + no answer %d, sent %r, ok %r" % (answered, ok_by, unanswered,
                                                                    sent, ok))


def check_engine(c, r, p):
    """The run says the engine it ran on, the one the path names."""
    eng = r.j("engine")
    want = p.get("engine")
    c.that(eng in ("io_uring", "epoll") and (want is None or eng == want), "engine",
           "engine %r%s" % (eng, ", want %r" % want if want else " (the default)"))


def check_patches(c, r, exact):
    ok, seen = r.j("actions.ok"), r.j("patches.observed")
    timed = r.j("latency_us.patch.count")
    if exact:
        # Every OK action's patch is seen once. Its latency is timed unless
        # the patch came before its action's send time was noted (the
        # hammer model matches the k-th patch to the k-th action claimed;
        # on a busy machine a claimed action can be sent after later ones
        # were answered): fewer timed is then said on the Patches line.
        said = re.search(r"action->patch times %d: " % timed, r.out) if isinstance(timed, int) \
            else None
        good = isinstance(ok, int) and ok > 0 and seen == ok and isinstance(timed, int) and \
            (timed == ok or (0 < timed < ok and said is not None))
        want = ("want patches.observed = actions.ok, action->patch count = actions.ok or "
                "fewer with the reason on the Patches line")
    else:
        # A restart: patches of a lost context may never come, and an action
        # whose answer the kill cut off may have been applied (its patch came).
        cap = ok + sum((r.j("errors") or {}).values())
        good = isinstance(ok, int) and ok > 0 and 0 < (seen or 0) <= cap and \
            0 < (timed or 0) <= cap
        want = "want 0 < patches.observed, action->patch count <= OK + unanswered (%d)" % cap
    c.that(good, "patches once per action",
           "actions.ok %r, patches.observed %r (+ %r opening, + %r extra), action->patch %r; %s" %
           (ok, seen, r.j("patches.opening"), r.j("patches.extra"), timed, want))


def check_sse(c, r, clean):
    opened, conn = r.j("sse.opened"), r.j("patches.observers_connected")
    c.that(isinstance(opened, int) and isinstance(conn, int) and opened >= conn >= 1,
           "sse.opened counted", "sse.opened %r, observers connected %r (want opened >= "
           "connected >= 1)" % (opened, conn))
    fails = r.j("sse.failures") or {}
    if clean:
        c.that(sum(fails.values()) == 0, "no SSE failure", "sse.failures %r" % fails)


def check_connections(c, r, tls):
    """Every connection established is one connect timed and, over TLS,
    one handshake counted and timed: a page, an action and an SSE stream's
    connection alike."""
    est = r.j("connections.established")
    timed = r.j("latency_us.connect.count") or 0
    c.that(isinstance(est, int) and est >= 1 and timed == est, "connects timed",
           "connections.established %r, connect latency count %r" % (est, timed))
    if tls:
        full, resumed = r.j("tls.full_handshakes") or 0, r.j("tls.resumed_handshakes") or 0
        cut = r.j("tls.unfinished_handshakes") or 0
        failed = sum((r.j("tls.failures") or {}).values())
        shaken = r.j("latency_us.tls_handshake.count") or 0
        c.that(full + resumed + cut + failed == est and shaken == full + resumed,
               "handshakes counted",
               "tls full %d + resumed %d + unfinished %d + failed %d, handshake latency count "
               "%d, established %r" % (full, resumed, cut, failed, shaken, est))


def check_verdict(c, r, scenario, want_exit):
    name, counts = CHECKS[scenario]
    c.that(r.j("check.name") == name, "check name as built-in",
           "check.name %r, want %r" % (r.j("check.name"), name))
    c.that(r.j("check.passed") is True and r.j("check.evaluated") is True,
           "check verdict PASS", "check.passed %r, evaluated %r, detail %r" %
           (r.j("check.passed"), r.j("check.evaluated"), r.j("check.detail")))
    if counts:
        c.that(r.j("signal.matches_ok") is True, "net increment = OK",
               "signal %r, actions.ok %r" % (r.j("signal"), r.j("actions.ok")))
    c.that(r.exit == want_exit, "exit status", "exit %r, want %r; reasons %r" %
           (r.exit, want_exit, r.j("result.reasons")))


def check_restart(c, r):
    lost, reloads = r.j("disruption.context_lost", 0), r.j("disruption.reloads", 0)
    c.that(lost >= 1 and reloads >= 1, "contexts lost and reloaded",
           "disruption.context_lost %r, reloads %r" % (lost, reloads))
    o = r.j("disruption.outage")
    good = isinstance(o, dict) and 0 < o["first_failure_s"] <= o["last_failure_s"] and \
        abs(o["last_failure_s"] - o["first_failure_s"] - o["duration_s"]) < 1e-3
    c.that(good, "outage window", "disruption.outage %r" % o)
    last = o.get("last_failure_s", 1e9) if isinstance(o, dict) else 1e9
    after = [p for p in (r.j("intervals") or []) if p.get("t", 0) > last and p.get("ok", 0) > 0]
    c.that(bool(after), "OK after the outage",
           "%d intervals with OK actions after the last failure" % len(after))
    c.that("Disruption" in r.out and "pages reloaded" in r.out, "summary says the outage",
           "Disruption and reload lines %s" % ("present" if "pages reloaded" in r.out
                                                else "missing"))


def run_sticky(opts, p):
    """sticky: its variants' accounting adds up and its check holds (the
    legacy variant fails by design, so the run's actions are not all OK)."""
    tls = p["sec"] == "tls"
    app = App(opts, local_server.free_port_below_ephemeral(), tls, False, opts.certs, workers=4)
    app.start()
    try:
        r = run_hammer(opts, target_args(app.port, tls, False, opts.certs) + engine_args(p) +
                       ["-c", "4", "-n", "40", "--timeout", TIMEOUT, "scenario", "sticky"])
    finally:
        app.stop()
    c = Checks()
    if r.json is None:
        c.that(False, "JSON written", "no --json document")
        return c.failed
    check_accounting(c, r)
    check_engine(c, r, p)
    variants = r.j("variants") or {}
    vsent = sum(v.get("sent", 0) for v in variants.values())
    vok = sum(v.get("ok", 0) for v in variants.values())
    c.that(vsent == r.j("actions.sent") and vok == r.j("actions.ok"), "variants add up",
           "variants sent %d ok %d, actions sent %r ok %r" % (vsent, vok, r.j("actions.sent"),
                                                            r.j("actions.ok")))
    # bench_app names its worker on every answer: each VU's page load and
    # every answered action count once under the worker that answered.
    for name, v in sorted(variants.items()):
        answered = sum(v.get("by_status", {}).values())
        seen = sum(v.get("workers", {}).values())
        c.that(seen == answered + 4, "workers seen: " + name,
               "X-Via-Worker counted %d, answered actions %d + 4 page loads" % (seen, answered))
    # Every probe answered 200 opened a stream (live, a reload script or an
    # empty 200), and the run's sse.opened says so.
    answered = sum(v.get("sse_outcomes", {}).get(k, 0) for v in variants.values()
                   for k in ("live", "reload_script", "empty_200"))
    c.that(answered > 0 and r.j("sse.opened") == answered, "sse.opened counts the probes",
           "sse.opened %r, probes answered 200: %d" % (r.j("sse.opened"), answered))
    name = "cookie variant reaches 100% HTTP OK"
    c.that(r.j("check.name") == name and r.j("check.passed") is True, "check verdict PASS",
           "check.name %r, passed %r, detail %r" % (r.j("check.name"), r.j("check.passed"),
                                                    r.j("check.detail")))
    c.that(r.exit == 0, "exit status", "exit %r; reasons %r" % (r.exit, r.j("result.reasons")))
    return c.failed


def run_path(opts, p):
    if "drift" in p:
        return DRIFTS[p["drift"]](opts)
    if p["scenario"] == "sticky":
        return run_sticky(opts, p)
    tls, h2 = p["sec"] == "tls", p["proto"] == "h2"
    app = App(opts, local_server.free_port_below_ephemeral(), tls, h2, opts.certs)
    app.start()
    try:
        args = target_args(app.port, tls, h2, opts.certs) + engine_args(p) + work_args(opts, p, app)
        r = run_hammer(opts, args, restart_fault(app) if p["restart"] else None)
    finally:
        app.stop()
    c = Checks()
    if r.json is None:
        c.that(False, "JSON written", "no --json document")
        return c.failed
    check_accounting(c, r)
    check_engine(c, r, p)
    check_patches(c, r, exact=not p["restart"])
    check_sse(c, r, clean=not p["restart"])
    check_connections(c, r, tls)
    # A restart fails the run (its outage), not the check.
    check_verdict(c, r, p["scenario"], 1 if p["restart"] else 0)
    if p["restart"]:
        check_restart(c, r)
    c.that(r.j("mode") == p["model"], "load model", "mode %r" % r.j("mode"))
    proto = r.j("connections.protocol")
    want = ("h2" if tls else "h2c") if h2 else "http/1.1"
    c.that(proto == want, "protocol", "connections.protocol %r, want %r" % (proto, want))
    return c.failed


# ---- drift cases ------------------------------------------------------------------


def embedded(opts, args):
    """A run against the embedded bench_app."""
    return run_hammer(opts, args)


def drift_flow_hammer_sse_opened(opts):
    """A hammer-model flow counts the stream it opened: not "SSE streams 0
    opened" beside "1/1 observers connected"."""
    r = embedded(opts, ["-c", "4", "-n", "40", "--timeout", TIMEOUT, "flow",
                        os.path.join(opts.examples, "counter.yaml")])
    c = Checks()
    check_sse(c, r, clean=True)
    line = next((l for l in r.out.splitlines() if l.startswith("SSE streams")), "")
    c.that(line.startswith("SSE streams       1 opened"), "summary line", line)
    return c.failed


def drift_import_har_patches(opts):
    """An imported HAR flow counts one patch per OK action: the events that
    open each page's stream are not patches."""
    har = os.path.join(opts.data, "phpvia-bench.har")
    imp = subprocess.run([opts.hammer, "import-har", har], capture_output=True, text=True)
    c = Checks()
    c.that(imp.returncode == 0, "import-har", "exit %r: %s" % (imp.returncode, imp.stderr.strip()))
    if imp.returncode:
        return c.failed
    tmp = tempfile.mkdtemp(prefix="hammer-consistency-")
    flow = os.path.join(tmp, "har.yaml")
    with open(flow, "w") as f:
        f.write(imp.stdout)
    # Think times cut short: the check is the counting, not the pauses.
    r = embedded(opts, ["--mode", "browser", "-c", "4", "-n", "24", "--timeout", TIMEOUT,
                        "flow", flow])
    os.unlink(flow)
    os.rmdir(tmp)
    check_accounting(c, r)
    check_patches(c, r, exact=True)
    check_sse(c, r, clean=True)
    opening = r.j("patches.opening", 0)
    c.that(opening >= r.j("sse.opened", 0) > 0, "opening events apart",
           "patches.opening %r for %r streams opened" % (opening, r.j("sse.opened")))
    c.that(r.exit == 0, "exit status", "exit %r; reasons %r" % (r.exit, r.j("result.reasons")))
    return c.failed


def drift_flow_hammer_reload(opts):
    """A hammer-model flow reloads its page when the server lost the
    context, as the built-in hammer model does: the counter flow across a
    restart of bench_app (also the consistency_counter_flow_hammer_*
    _restart paths, with the full accounting)."""
    p = dict(scenario="counter", source="flow", model="hammer", proto="h1", sec="plain",
             restart=True)
    app = App(opts, local_server.free_port_below_ephemeral(), False, False, opts.certs)
    app.start()
    try:
        r = run_hammer(opts,
                       target_args(app.port, False, False, opts.certs) + work_args(opts, p, app),
                       restart_fault(app))
    finally:
        app.stop()
    c = Checks()
    check_restart(c, r)
    c.that(r.j("check.passed") is True, "check PASS on the new context",
           "check.passed %r, detail %r" % (r.j("check.passed"), r.j("check.detail")))
    return c.failed


def drift_first_page_outage(opts):
    """A tab whose first page meets a server that is away (a refused
    connect) reloads it with the back-off and works, in the built-in
    browser model and in a flow's page step alike (the flow's tab stopped);
    a refused connect is a failed connect attempt, not a failed page.
    bench_app is killed after hammer's reachability probe, while hammer
    waits for --start-at (the lead is 3 s plus ten times what starting
    bench_app took here), and started again after the load began."""
    c = Checks()
    for source in ("builtin", "flow"):
        p = dict(scenario="counter", source=source, model="browser", proto="h1", sec="plain",
                 restart=True)
        app = App(opts, local_server.free_port_below_ephemeral(), False, False, opts.certs)
        app.start()
        lead = 3.0 + 10 * app.start_s  # the probe, on a busy machine too
        start = time.time() + lead
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start)) + \
            ".%03dZ" % int((start % 1) * 1000)

        def fault(proc, app=app, start=start, lead=lead):
            # Half the lead: hammer's reachability probe and first server
            # watch are over (they take milliseconds), the load not begun.
            while proc.poll() is None and time.time() < start - lead / 2:
                time.sleep(0.02)
            app.kill()
            while proc.poll() is None and time.time() < start + 0.5:
                time.sleep(0.02)
            app.start()

        try:
            r = run_hammer(opts, target_args(app.port, False, False, opts.certs) +
                           ["--start-at", stamp] + work_args(opts, p, app), fault)
        finally:
            app.stop()
        detail = r.j("check.detail") or ""
        c.that(r.j("check.passed") is True and detail.startswith("4/4 VUs passed"),
               "%s: every tab worked" % source,
               "check.passed %r, detail %r" % (r.j("check.passed"), detail))
        c.that((r.j("disruption.connect_failures") or 0) >= 1, "%s: refused connects" % source,
               "disruption.connect_failures %r" % r.j("disruption.connect_failures"))
    return c.failed


def drift_caught_up_nothing_ok(opts):
    """The end of a hammer-model run waits for the stream to catch up by one
    rule for the built-in and its flow (hm_watch_caught_up): with no OK
    action there is no effect to wait for. The built-in cpu scenario
    (a constant check, no counter) used to wait out --timeout after its
    last action for a patch that could not come; its flow did not. Against
    a server whose every action answers 500, both must end well inside
    --timeout and give the same verdict."""
    timeout_s = 15
    srv = subprocess.Popen([sys.executable, os.path.join(opts.misbehave, "server.py"), "--port",
                            "0", "--mode", "all-500"], stdout=subprocess.PIPE, text=True)
    c = Checks()
    try:
        port = int(srv.stdout.readline().strip())
        url = ["--url", "http://127.0.0.1:%d" % port, "--no-server-watch"]
        size = ["-c", "2", "-n", "10", "--timeout", "%ds" % timeout_s]
        runs = {"built-in": run_hammer(opts, url + size + ["scenario", "cpu"]),
                "flow": run_hammer(opts, url + size + ["flow", os.path.join(opts.examples,
                                                                            "cpu.yaml")])}
    finally:
        srv.terminate()
        srv.wait(10)
    for what, r in runs.items():
        c.that(r.j("actions.ok") == 0 and r.j("actions.sent") == 10, what + " work",
               "sent %r, ok %r" % (r.j("actions.sent"), r.j("actions.ok")))
        c.that(r.duration < timeout_s, what + " ends before --timeout",
               "ran %.2f s, --timeout %d s: with no OK action nothing is left to wait for" %
               (r.duration, timeout_s))
        check_accounting(c, r)
    b, f = runs["built-in"], runs["flow"]
    c.that((b.j("check.passed"), b.j("check.evaluated"), b.exit) ==
           (f.j("check.passed"), f.j("check.evaluated"), f.exit), "same verdict",
           "built-in passed %r evaluated %r exit %r; flow passed %r evaluated %r exit %r" %
           (b.j("check.passed"), b.j("check.evaluated"), b.exit, f.j("check.passed"),
            f.j("check.evaluated"), f.exit))
    return c.failed


DRIFTS = {
    "caught_up_nothing_ok": drift_caught_up_nothing_ok,
    "first_page_outage": drift_first_page_outage,
    "flow_hammer_sse_opened": drift_flow_hammer_sse_opened,
    "flow_hammer_reload": drift_flow_hammer_reload,
    "import_har_patches": drift_import_har_patches,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hammer")
    ap.add_argument("--bench-app")
    ap.add_argument("--certs-script", help="scripts/gen-test-cert.sh")
    ap.add_argument("--examples", help="examples/flows")
    ap.add_argument("--data", help="tests/data (HAR fixtures)")
    ap.add_argument("--misbehave", help="tests/misbehave (server.py)")
    ap.add_argument("--list", action="store_true", help="print the path names")
    ap.add_argument("paths", nargs="*")
    opts = ap.parse_args()
    paths = all_paths()
    if opts.list:
        print("\n".join(paths))
        return 0
    if not (opts.hammer and opts.bench_app and opts.certs_script and opts.examples and opts.data
            and opts.misbehave and opts.paths):
        ap.error("--hammer, --bench-app, --certs-script, --examples, --data, --misbehave and a "
                 "PATH are needed")
    unknown = [n for n in opts.paths if n not in paths]
    if unknown:
        ap.error("unknown path(s): %s (see --list)" % ", ".join(unknown))
    tmp = tempfile.mkdtemp(prefix="hammer-consistency-certs-")
    try:
        subprocess.run(["sh", opts.certs_script, tmp], check=True, stdout=subprocess.DEVNULL)
        opts.certs = tmp
        ok = True
        for name in opts.paths:
            t0 = time.monotonic()
            failed = run_path(opts, paths[name])
            print("RESULT %s" % json.dumps({"path": name, "passed": not failed,
                                            "seconds": round(time.monotonic() - t0, 2),
                                            "failed": failed}), flush=True)
            ok = ok and not failed
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
