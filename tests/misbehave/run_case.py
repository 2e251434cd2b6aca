#!/usr/bin/env python3
"""Runs hammer against one misbehaving server (server.py) or one faulty
bench_app and checks what issue 11 promises: hammer ends in time, stays
within its memory bound, never crashes, counts the failure by kind with a
reason, and writes a complete --json on every exit.

usage: run_case.py --hammer HAMMER --bench-app BENCH_APP [options] CASE...
       run_case.py --list

Every assertion of a case is evaluated and printed (PASS/FAIL), not just the
first that fails, and one "RESULT {json}" line per case summarises the run
(exit code, duration, peak RSS, failed checks). Exit 0 when every check of
every case held, 1 otherwise, 77 when every case was skipped (a case that
names --engine io_uring where io_uring is not available, with why).

Bounds are derived from the run's own options, never from the machine's
speed: a run must end within -d + k x --timeout + SLACK seconds (k counts the
phases that may each wait one --timeout: probe, set-up, SSE baseline, the
last request, tear-down), and stay under a peak RSS bound (ru_maxrss of
hammer, from wait4). SLACK is generous (5 s) because hammer's own CPU work
is milliseconds; what it must catch is a run that hangs for 30-60 s.

The JSON keys of issue 11 (docs/output.md) that every case checks:
  error_reasons.<kind>        first example of each request error kind:
                              {reason, where, bytes}
  sse.opened                  SSE streams that got a 200 and headers
  sse.failures.{status,protocol,closed,timeout,connect,reset,other}
  sse.first_failure           the first SSE failure, {kind, reason, where,
                              bytes}, or null
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import local_server  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SLACK_S = 5.0
ERROR_KINDS = ("connect", "timeout", "reset", "closed", "protocol", "tls", "other")
SSE_KINDS = ("status", "protocol", "closed", "timeout")


def parse_duration(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)?", text)
    if not m:
        raise ValueError(text)
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]
    return float(m.group(1)) * scale


def opt_value(args, *names):
    for i, a in enumerate(args[:-1]):
        if a in names:
            return args[i + 1]
    return None


# ---- what a run produced ---------------------------------------------------


class Run:
    """One hammer run: exit code, duration, peak RSS, output, JSON, server stats."""

    def __init__(self):
        self.exit = None
        self.signaled = None
        self.duration = 0.0
        self.rss_mb = 0.0
        self.out = ""
        self.json = None
        self.json_error = None
        self.server_stats = {}
        self.killed_at_limit = False
        self.bound = 0.0

    def j(self, dotted, default=None):
        cur = self.json
        for part in dotted.split("."):
            if not isinstance(cur, dict) or part not in cur:
                return default
            cur = cur[part]
        return cur


# ---- checks: each returns (ok, detail) ---------------------------------------


def exit_in(*codes):
    def check(r):
        return r.exit in codes, "exit %s, want %s" % (r.exit, " or ".join(map(str, codes)))
    check.label = "exit code"
    return check


def not_signaled(r):
    return r.signaled is None, ("killed by signal %s" % r.signaled if r.signaled
                                else "exited normally")
not_signaled.label = "no crash"


def no_sanitizer_report(r):
    """Under ASan a stack overflow is an exit 1 with a report, not a signal."""
    m = re.search(r"ERROR: (Address|Leak|Memory)Sanitizer[^\n]*|runtime error:[^\n]*", r.out)
    return m is None, m.group(0) if m else "none"
no_sanitizer_report.label = "no sanitizer report"


def ends_in_bound(r):
    return (not r.killed_at_limit and r.duration <= r.bound,
            "%.1f s, bound %.1f s%s" % (r.duration, r.bound,
                                         " (killed: did not end)" if r.killed_at_limit else ""))
ends_in_bound.label = "duration"


def rss_below(mb):
    def check(r):
        return r.rss_mb < mb, "peak RSS %.0f MB, bound %d MB" % (r.rss_mb, mb)
    check.label = "peak RSS"
    return check


def json_complete(r):
    """The keys docs/output.md promises today, with their types."""
    if r.json is None:
        return False, "no JSON: %s" % r.json_error
    want = {
        "hammer_version": str, "scenario": str, "target": str, "engine": str,
        "threads": int, "concurrency": int, "passed": bool, "interrupted": bool,
        "actions.sent": int, "actions.ok": int, "actions.failed": int,
        "actions.by_status": dict, "connections.requested": int,
        "connections.established": int, "connections.reconnects": int,
        "connections.retries": int, "connections.failed": int,
        "wall_seconds": (int, float), "throughput_rps": (int, float),
        "latency_us.action.count": int, "check.detail": str, "thresholds": list,
    }
    for k in ERROR_KINDS:
        want["errors." + k] = int
    missing = [k for k, t in want.items() if not isinstance(r.j(k), t)]
    if "fatal" not in r.json or not (r.json["fatal"] is None or isinstance(r.json["fatal"], str)):
        missing.append("fatal")
    return not missing, "missing or mistyped: %s" % ", ".join(missing) if missing else "all keys"
json_complete.label = "JSON complete"


def json_new_keys(php_via):
    """The keys issue 11 added (see the module doc)."""
    def check(r):
        if r.json is None:
            return False, "no JSON"
        missing = []
        if not isinstance(r.j("error_reasons"), dict):
            missing.append("error_reasons")
        if php_via:
            if not isinstance(r.j("sse.opened"), int):
                missing.append("sse.opened")
            for k in SSE_KINDS:
                if not isinstance(r.j("sse.failures." + k), int):
                    missing.append("sse.failures." + k)
            if "first_failure" not in (r.j("sse") or {}):
                missing.append("sse.first_failure")
        return not missing, "missing: %s" % ", ".join(missing) if missing else "present"
    check.label = "JSON issue-11 keys"
    return check


def counts_consistent(r):
    if r.json is None:
        return False, "no JSON"
    sent, ok, failed = r.j("actions.sent", -1), r.j("actions.ok", -1), r.j("actions.failed", -1)
    bad_status = sum(v for k, v in (r.j("actions.by_status") or {}).items()
                     if not 200 <= int(k) < 300)
    errs = sum(r.j("errors." + k, 0) or 0 for k in ERROR_KINDS)
    ok_ = sent == ok + failed and failed == bad_status + errs
    return ok_, "sent %s = ok %s + failed %s; failed = non-2xx %s + errors %s" % (
        sent, ok, failed, bad_status, errs)
counts_consistent.label = "counts add up"


def verdict_explained(r):
    """The verdict says why (docs/output.md, "How to read the verdict"): a
    FAIL lists its reasons in result.reasons and under the summary's Result
    line; a check is PASS only over enough successful work (the OK actions
    whose effect it saw are at least one and at least half of those sent)."""
    if r.json is None:
        return False, "no JSON"
    passed, result = r.j("passed"), r.j("result") or {}
    reasons = result.get("reasons")
    if result.get("passed") is not passed or not isinstance(reasons, list):
        return False, "result = %r beside passed = %r" % (result, passed)
    if not passed and not reasons:
        return False, "FAIL without a reason"
    m = re.search(r"^Result +FAIL\n((?:  - .*\n)*)", r.out, re.M)
    if m and len(m.group(1).splitlines()) != len(reasons):
        return False, "summary lists %d reasons, JSON %d" % (len(m.group(1).splitlines()),
                                                           len(reasons))
    sent, ok = r.j("actions.sent", 0), r.j("actions.ok", 0)
    seen = ok - (r.j("disruption.swallowed_actions", 0) or 0)
    if r.j("check.passed") and r.j("scenario") != "sticky" and (seen < 1 or 2 * seen < sent):
        return False, "check PASS over %d of %d actions seen" % (seen, sent)
    if r.j("check.name") and r.j("check.evaluated") is False and not r.j("check.not_evaluated"):
        return False, "check not evaluated without why"
    return True, "%s%s; check %s" % ("PASS" if passed else "FAIL: ", "; ".join(reasons)[:160],
                                     "PASS" if r.j("check.passed") else
                                     "not evaluated" if r.j("check.evaluated") is False else
                                     "FAIL" if r.j("check.name") else "none")
verdict_explained.label = "verdict explained"


def errors_at_least(n, *kinds):
    def check(r):
        got = sum(r.j("errors." + k, 0) or 0 for k in kinds)
        return got >= n, "errors.%s = %d, want >= %d" % ("+".join(kinds), got, n)
    check.label = "error kind"
    return check


def errors_none(r):
    errs = {k: r.j("errors." + k) for k in ERROR_KINDS if r.j("errors." + k)}
    return r.json is not None and not errs and r.j("actions.failed") == 0, "errors %s, failed %s" % (
        errs or "none", r.j("actions.failed"))
errors_none.label = "no errors"


def reason_for(kind, pattern):
    """error_reasons.<kind>.reason says what was wrong, .where names the
    request, and the summary prints the reason."""
    def check(r):
        why = r.j("error_reasons.%s.reason" % kind)
        if not isinstance(why, str) or not why:
            return False, "error_reasons.%s.reason missing" % kind
        if not r.j("error_reasons.%s.where" % kind):
            return False, "error_reasons.%s.where missing" % kind
        if pattern and not re.search(pattern, why, re.I):
            return False, "error_reasons.%s = %r does not match /%s/" % (kind, why, pattern)
        if why not in r.out:
            return False, "reason %r not in the summary" % why
        return True, repr(why)
    check.label = "error reason"
    return check


def sse_failures_at_least(n, *kinds):
    def check(r):
        got = sum(r.j("sse.failures." + k, 0) or 0 for k in kinds)
        return got >= n, "sse.failures.%s = %d, want >= %d" % ("+".join(kinds), got, n)
    check.label = "SSE failure kind"
    return check


def sse_reason(pattern):
    def check(r):
        why = r.j("sse.first_failure.reason")
        if not isinstance(why, str) or not re.search(pattern, why, re.I):
            return False, "sse.first_failure.reason = %r, want /%s/" % (why, pattern)
        if why not in r.out:
            return False, "SSE failure %r not in the summary" % why
        return True, repr(why)
    check.label = "SSE failure reason"
    return check


def fatal_matches(pattern):
    def check(r):
        f = r.j("fatal")
        ok = isinstance(f, str) and re.search(pattern, f, re.I) is not None
        return ok, "fatal = %r, want /%s/" % (f, pattern)
    check.label = "fatal reason"
    return check


def detail_or_fatal_matches(pattern):
    def check(r):
        texts = [t for t in (r.j("fatal"), r.j("check.detail")) if isinstance(t, str)]
        ok = any(re.search(pattern, t, re.I) for t in texts)
        return ok, "fatal/check.detail = %r, want /%s/" % (texts, pattern)
    check.label = "failure reason"
    return check


def status_is_all(code):
    def check(r):
        by = r.j("actions.by_status") or {}
        sent = r.j("actions.sent", 0)
        return sent > 0 and by.get(str(code)) == sent, "by_status %s of %s sent" % (by, sent)
    check.label = "status counted"
    return check


def status_absent(code):
    def check(r):
        by = r.j("actions.by_status") or {}
        return r.json is not None and str(code) not in by, "by_status %s" % by
    check.label = "no misattributed status"
    return check


def json_true(key):
    def check(r):
        return r.j(key) is True, "%s = %r" % (key, r.j(key))
    check.label = key
    return check


def json_at_least(key, n):
    def check(r):
        v = r.j(key)
        return isinstance(v, int) and v >= n, "%s = %r, want >= %d" % (key, v, n)
    check.label = key
    return check


def any_of(label, *alternatives):
    """Passes when every check of one alternative passes."""
    def check(r):
        notes = []
        for alt in alternatives:
            res = [c(r) for c in alt]
            if all(ok for ok, _ in res):
                return True, "; ".join(d for _, d in res)
            notes.append("[" + "; ".join(d for ok, d in res if not ok) + "]")
        return False, " or ".join(notes)
    check.label = label
    return check


def output_matches(pattern):
    def check(r):
        return re.search(pattern, r.out, re.I | re.M) is not None, "output /%s/" % pattern
    check.label = "summary"
    return check


def server_stat(key, pred, text):
    def check(r):
        v = r.server_stats.get(key)
        return v is not None and pred(v), "server %s = %r, want %s" % (key, v, text)
    check.label = "server saw"
    return check


# ---- cases -------------------------------------------------------------------

HM = ["-t", "1", "-c", "4", "-n", "200", "-d", "2s", "--timeout", "1s", "scenario", "counter"]
BR = ["-t", "1", "--mode", "browser", "-c", "4", "-n", "40", "-d", "2s", "--timeout", "1s",
      "scenario", "counter"]
GET = ["-t", "1", "-c", "4", "-n", "200", "-d", "2s", "--timeout", "1s", "scenario", "get"]

CASES = {}


def case(name, doc, hammer, server=None, path="", checks=(), phases=3, rss_mb=200,
         extra_s=0.0, fault=None, php_via=True, base=True, use_d=True, watch=False):
    """Registers a case. server: server.py options (dict), "bench_app" for a
    fault case, or None for no server at all. phases: how many --timeout
    waits the bound allows on top of -d (use_d False: not -d, for runs
    that a signal ends early); extra_s: seconds more (a fault's own
    length). base: add the checks every run must pass (no crash,
    duration, RSS, JSON complete, counts add up). watch: keep the server
    watch on (its /_health samples and grace period are not what the other
    cases bound, so they run with --no-server-watch)."""
    common = [not_signaled, no_sanitizer_report, ends_in_bound, rss_below(rss_mb), json_complete,
              json_new_keys(php_via), counts_consistent, verdict_explained] if base else []
    if not watch:
        hammer = ["--no-server-watch"] + list(hammer)
    CASES[name] = dict(doc=doc, hammer=hammer, server=server, path=path,
                       checks=common + list(checks), phases=phases, extra_s=extra_s,
                       fault=fault, rss_mb=rss_mb, use_d=use_d)


def srv(mode, **kw):
    d = {"mode": mode}
    d.update(kw)
    return d


ENGINES = ("io_uring", "epoll")


def each_engine(name, doc, hammer, **kw):
    """The case once per engine, NAME_io_uring and NAME_epoll: the engines
    read, wait and time out by different code, so a behaviour must hold on
    both (an io_uring case skips where io_uring is not available)."""
    for eng in ENGINES:
        case("%s_%s" % (name, eng), "%s (%s)" % (doc, eng), ["--engine", eng] + list(hammer),
             **kw)


# The load models a behaviour may belong to: the hammer model, the browser
# model (both php-via) and get, with how many --timeout waits each may take.
MODELS = {"hm": ("hammer mode", HM, 3), "br": ("browser mode", BR, 4), "get": ("get", GET, 3)}


def model_args(model, *opts):
    """hammer's arguments for MODEL with opts (-c, -n, -d, --timeout ...)."""
    head = ["-t", "1"] + (["--mode", "browser"] if model == "br" else [])
    return head + list(opts) + ["scenario", "get" if model == "get" else "counter"]


def each_model(stem, doc, mode, models, checks, args=None, srv_kw=None, **kw):
    """STEM_<model>_<engine> for each of models ("hm", "br", "get") on each
    engine, against server.py --mode MODE. get's requests are /flood, so
    there the mode misbehaves on /flood. args: model -> hammer arguments
    (default MODELS'); checks: a list, or model -> list."""
    for m in models:
        what, hammer, phases = MODELS[m]
        opts = dict(srv_kw or {})
        more = dict(phases=phases)
        if m == "get":
            opts["where"] = "flood"
            more.update(path="/flood", php_via=False)
        more.update(kw)
        each_engine("%s_%s" % (stem, m), "%s (%s)" % (doc, what), args[m] if args else hammer,
                    server=srv(mode, **opts), checks=checks(m) if callable(checks) else checks,
                    **more)


def request_error_case(stem, mode, kinds, pattern=None, browser=False, **srv_kw):
    checks = [exit_in(1), errors_at_least(1, *kinds)]
    checks.append(reason_for(kinds[0], pattern) if len(kinds) == 1 else
                  any_of("error reason", *[[reason_for(k, pattern)] for k in kinds]))
    case(stem + "_hm", "%s on every action (hammer mode)" % mode, HM, srv(mode, **srv_kw),
         checks=checks)
    if browser:
        case(stem + "_br", "%s on every action (browser mode)" % mode, BR, srv(mode, **srv_kw),
             checks=checks, phases=4)


# Controls: the scripted server speaks php-via well enough for a clean run.
case("good_hm", "control: a well-behaved server, hammer mode", HM, srv("good"),
     checks=[exit_in(0), errors_none, sse_failures_at_least(0, *SSE_KINDS)])
case("good_br", "control: a well-behaved server, browser mode", BR, srv("good"),
     checks=[exit_in(0), errors_none], phases=4)
case("good_get", "control: a well-behaved server, get", GET, srv("good"), path="/flood",
     checks=[exit_in(0), errors_none], php_via=False)

# The server watch (issue 12): a /_health that answers wrongly is said once
# and no longer watched; the run itself never notices. Its grace period is
# --watch-grace 1s, so the bound allows that and the baseline's wait.
WHM = ["-t", "1", "-c", "4", "-n", "200", "-d", "2s", "--timeout", "1s", "--watch-grace", "1s",
       "scenario", "counter"]


def watch_stopped(pattern):
    def check(r):
        v = r.j("server_watch.stopped") or ""
        return re.search(pattern, v) is not None, "server_watch.stopped = %r" % v
    check.label = "server watch stopped"
    return check


WATCH_OFF = [exit_in(0), errors_none, output_matches(r"hammer: not watching the server: ")]
case("watch_health_garbage", "/_health answers garbage: watch off, run unharmed", WHM,
     srv("garbage", where="health"), watch=True, phases=5,
     checks=WATCH_OFF + [watch_stopped(r"GET /_health failed")])
case("watch_health_500", "/_health answers 500: watch off, run unharmed", WHM,
     srv("all-500", where="health"), watch=True, phases=5,
     checks=WATCH_OFF + [watch_stopped(r"answered HTTP 500")])
case("watch_health_endless", "/_health sends an endless body: watch off, run unharmed", WHM,
     srv("endless-body", where="health"), watch=True, phases=5,
     checks=WATCH_OFF + [watch_stopped(r"GET /_health failed")])
case("watch_health_slow", "/_health dribbles bytes past --timeout: watch off, run unharmed",
     WHM, srv("slow-bytes", where="health"), watch=True, phases=5,
     checks=WATCH_OFF + [watch_stopped(r"GET /_health failed")])
case("watch_health_good", "a well-behaved /_health: sampled, its contexts never come back",
     WHM, srv("good"), watch=True, phases=5,
     checks=[exit_in(0), errors_none, json_true("server_watch.checked"),
             output_matches(r"^Note +the server still holds \d+ of the \d+ contexts? hammer")])

request_error_case("close_mid_headers", "close-mid-headers", ["closed"], browser=True)
request_error_case("close_mid_body", "close-mid-body", ["closed"])
request_error_case("short_body_close", "short-body", ["closed"])
request_error_case("garbage", "garbage", ["protocol"], browser=True)
request_error_case("header_1mb", "header-1mb", ["protocol"], pattern="header")
request_error_case("endless_headers", "endless-headers", ["protocol"], pattern="header")
request_error_case("chunk_invalid", "chunk-invalid", ["protocol"], pattern="chunk")
request_error_case("chunk_2e64", "chunk-2e64", ["protocol"], pattern="chunk")
request_error_case("slow_bytes", "slow-bytes", ["timeout"])

# Connection-level faults, from the first connection: the target is unreachable.
UNREACHABLE = [exit_in(2), fatal_matches("unreachable")]
case("rst_accept_unreachable", "every connection reset on accept: hammer says unreachable",
     HM, srv("rst-accept"), checks=UNREACHABLE)
case("never_read_unreachable", "every connection accepted and never read",
     HM, srv("never-read"), checks=UNREACHABLE)
case("unreachable_closed_port", "nothing listens on the port", HM, None,
     checks=UNREACHABLE)
# ... and mid-run: probe, page and SSE connections are served, the senders' are not.
case("rst_accept_hm", "connections after the first 3 reset on accept", HM,
     srv("rst-accept", good_conns=3), checks=[exit_in(1), errors_at_least(1, "reset", "closed")])
case("never_read_hm", "connections after the first 3 accepted and never read", HM,
     srv("never-read", good_conns=3),
     checks=[exit_in(1), errors_at_least(1, "timeout"), reason_for("timeout", None)])
case("full_backlog_hm", "the server stops accepting after 3 connections (backlog 1 fills)",
     HM, srv("full-backlog", good_conns=3),
     checks=[exit_in(1), errors_at_least(1, "connect", "timeout")])

case("all_500_hm", "every action answers 500", HM, srv("all-500"),
     checks=[exit_in(1), status_is_all(500)])
case("all_500_page", "every request answers 500 (the page too): set-up fails", HM,
     srv("all-500", where="all"), checks=[exit_in(2), fatal_matches("500")], phases=4)
case("all_500_get", "get: every request answers 500", GET, srv("all-500", where="flood"),
     path="/flood", checks=[exit_in(1), status_is_all(500)], php_via=False)
case("redirect_loop_page", "the page redirects to itself: set-up fails", HM,
     srv("redirect-loop"), checks=[exit_in(2), fatal_matches("302|redirect")])
case("redirect_loop_get", "get: every request redirects to itself", GET,
     srv("redirect-loop", where="flood"), path="/flood", php_via=False,
     checks=[exit_in(1), any_of("redirect counted",
                                [status_is_all(302)],
                                [errors_at_least(1, "protocol"),
                                 reason_for("protocol", "redirect")])])

# 1000 Set-Cookie headers before via_session_id: the jar must keep the
# session cookie (the server answers 403 without it) or fail saying why.
COOKIES = [any_of("cookie jar",
                  [exit_in(0), errors_none,
                   server_stat("no_session", lambda v: v == 0, "0")],
                  [exit_in(1, 2), output_matches(r"cookie.*\d"),
                   detail_or_fatal_matches(r"cookie.*\d")])]
case("many_cookies_hm", "the page sets 1000 cookies before via_session_id (hammer mode)",
     HM, srv("many-cookies"), checks=COOKIES)
case("many_cookies_br", "the page sets 1000 cookies before via_session_id (browser mode)",
     BR, srv("many-cookies"), checks=COOKIES, phases=4)

ENDLESS_1XX = [exit_in(1), errors_at_least(1, "timeout", "protocol")]
case("endless_1xx_hm", "actions answered by endless 100 Continue (hammer mode)", HM,
     srv("endless-1xx"), checks=ENDLESS_1XX)
case("endless_1xx_br", "actions answered by endless 100 Continue (browser mode)", BR,
     srv("endless-1xx"), checks=ENDLESS_1XX, phases=4)
case("endless_1xx_get", "get: endless 100 Continue", GET, srv("endless-1xx", where="flood"),
     path="/flood", checks=ENDLESS_1XX, php_via=False)

case("two_responses_hm", "each action answered twice (200, then an unsolicited 500)", HM,
     srv("two-responses"),
     checks=[exit_in(1), status_absent(500), errors_at_least(1, "protocol"),
             reason_for("protocol", None)])

DEEP = "nest|depth|deep"
case("deep_json_page_hm", "the page's data-signals nests 800 levels (hammer mode)", HM,
     srv("deep-json-page"), checks=[exit_in(2), fatal_matches(DEEP)])
case("deep_json_page_br", "the page's data-signals nests 800 levels (browser mode)", BR,
     srv("deep-json-page"), checks=[exit_in(1, 2), detail_or_fatal_matches(DEEP)], phases=4)

def sse_case(stem, mode, kind, pattern=None, extra=(), rss_mb=200, br_extra=(), hm_extra=(),
             **srv_kw):
    checks = [exit_in(1), sse_failures_at_least(1, kind)]
    if pattern:
        checks.append(sse_reason(pattern))
    case(stem + "_hm", "/_sse: %s (hammer mode)" % mode, HM, srv(mode, **srv_kw),
         checks=checks + list(extra) + list(hm_extra), rss_mb=rss_mb)
    case(stem + "_br", "/_sse: %s (browser mode)" % mode, BR, srv(mode, **srv_kw),
         checks=checks + list(extra) + list(br_extra), rss_mb=rss_mb, phases=4)


def sse_reconnects_backed_off(tabs, browser=True):
    """Each follower's stream (a tab's, or the hammer model's one
    observer), ended by the server, was opened again after the reload
    back-off (HM_BACKOFF_RELOAD: 100 ms doubling to 2 s): at least once
    per follower, and no more often than those waits fit in the run's own
    duration (a reconnect that skipped the wait would loop). Both models
    follow with one EventSource (src/load/event_source.c), so both count a
    retry that connected as a reconnect: the browser's check line says
    its SSE reconnects, the hammer model's are its only ones (its
    senders' connections stay open)."""
    def check(r):
        streams = (r.server_stats.get("requests") or {}).get("sse", 0)
        if browser:
            m = re.search(r"(\d+) SSE reconnects", r.out)
            reconnects = int(m.group(1)) if m else -1
        else:
            reconnects = r.j("connections.reconnects")
            reconnects = reconnects if isinstance(reconnects, int) else -1
        most, spent, wait = 1, 0.0, 0.1
        while spent + wait <= r.duration:
            spent += wait
            wait = min(wait * 2, 2.0)
            most += 1
        ok = 2 * tabs <= streams <= most * tabs and tabs <= reconnects < streams
        return ok, ("server saw %d SSE streams of %d followers (want 2 to %d each in %.1f s), "
                    "%d SSE reconnects (want %d to %d: each stream after a follower's first)" %
                    (streams, tabs, most, r.duration, reconnects, tabs, streams - 1))
    check.label = "SSE reconnects"
    return check


sse_case("deep_json_sse", "sse-deep-json", "protocol", DEEP)
sse_case("sse_silent", "sse-silent", "timeout")
sse_case("sse_50mb", "sse-50mb", "protocol")
sse_case("sse_no_final_blank", "sse-no-final-blank", "closed",
         br_extra=[sse_reconnects_backed_off(4)],
         hm_extra=[sse_reconnects_backed_off(1, browser=False)])
sse_case("sse_500", "all-500", "status", "500", where="sse")
sse_case("sse_garbage", "garbage", "protocol", where="sse")

# The same under epoll, where a read that finds data never waits, so a
# deadline armed only while waiting is never checked (see the diagnosis).
EPOLL = ["--engine", "epoll"]
case("endless_1xx_hm_epoll", "actions answered by endless 100 Continue (hammer mode, epoll)",
     EPOLL + HM, srv("endless-1xx"), checks=ENDLESS_1XX)
case("endless_1xx_get_epoll", "get: endless 100 Continue (epoll)", EPOLL + GET,
     srv("endless-1xx", where="flood"), path="/flood", checks=ENDLESS_1XX, php_via=False)
case("sse_50mb_br_epoll", "/_sse: sse-50mb (browser mode, epoll)", EPOLL + BR, srv("sse-50mb"),
     checks=[exit_in(1), sse_failures_at_least(1, "protocol")], phases=4)

GET32 = ["-t", "1", "-c", "32", "-n", "2000", "-d", "1s", "--timeout", "1s", "scenario", "get"]
case("get_endless_body", "get: an endless chunked body (the probe gets it too)", GET32,
     srv("endless-body"), path="/flood", php_via=False, rss_mb=200,
     checks=[exit_in(1), errors_at_least(1, "timeout")])
case("get_endless_body_flood", "get: an endless chunked body on every request after the probe",
     GET32, srv("endless-body", skip=1), path="/flood", php_via=False, rss_mb=200,
     checks=[exit_in(1), errors_at_least(1, "timeout")])
case("get_endless_body_flood_epoll", "get: an endless chunked body after the probe (epoll)",
     EPOLL + GET32, srv("endless-body", skip=1), path="/flood", php_via=False, rss_mb=200,
     checks=[exit_in(1), errors_at_least(1, "timeout")])


# ---- SIGINT at any moment ----------------------------------------------------

def sigint_at(seconds):
    def fault(ctx):
        time.sleep(seconds)
        ctx["hammer"].send_signal(signal.SIGINT)
    return fault


INTERRUPTED = [exit_in(1, 2, 130), json_true("interrupted")]
case("sigint_during_probe", "SIGINT while the reachability probe waits (--timeout 10s)",
     ["-t", "1", "-c", "4", "-n", "200", "--timeout", "10s", "scenario", "counter"],
     srv("never-read"), fault=sigint_at(0.5), phases=0, extra_s=0.5 + 1,
     checks=INTERRUPTED)
case("sigint_during_setup", "SIGINT while the page load waits (--timeout 10s)",
     ["-t", "1", "-c", "4", "-n", "200", "--timeout", "10s", "scenario", "counter"],
     srv("never-read", good_conns=1), fault=sigint_at(0.5), phases=0, extra_s=0.5 + 1,
     checks=INTERRUPTED)
# A healthy run interrupted passes: the verdict covers what ran.
case("sigint_mid_run", "SIGINT 1.5 s into a 30 s run against a good server",
     ["-t", "1", "-c", "4", "-d", "30s", "--timeout", "2s", "scenario", "counter"],
     srv("good"), fault=sigint_at(1.5), phases=2, extra_s=1.5, use_d=False,
     checks=[exit_in(0), json_true("interrupted"), json_at_least("actions.ok", 1),
             output_matches(r"^Interrupted +after \d+\.\d s"), output_matches(r"^Result +PASS")])

# Ctrl-C ends a think pause at once (here 100 s), and the VUs' verdicts
# cover what they did.
case("sigint_think_br", "SIGINT 1.5 s into a browser run whose VUs think 100 s",
     ["-t", "1", "--mode", "browser", "-c", "4", "-d", "30s", "--timeout", "2s",
      "--think", "100s", "scenario", "counter"],
     srv("good"), fault=sigint_at(1.5), phases=1, extra_s=1.5, use_d=False,
     checks=[exit_in(0), json_true("interrupted"), json_at_least("actions.ok", 4)])
# -d ends a think pause too: a run does not outlast its duration thinking.
case("think_past_d_br", "browser VUs that think 100 s, in a 2 s run",
     ["-t", "1", "--mode", "browser", "-c", "4", "-d", "2s", "--timeout", "1s", "--think",
      "100s", "scenario", "counter"],
     srv("good"), phases=4, checks=[exit_in(0), errors_none, json_at_least("actions.ok", 4)])
# The first Ctrl-C lets requests in flight finish, up to --timeout ...
case("sigint_in_flight_hm", "SIGINT while every action waits on a server that never reads",
     ["-t", "1", "-c", "4", "-d", "30s", "--timeout", "3s", "scenario", "counter"],
     srv("never-read", good_conns=3), fault=sigint_at(1.0), phases=2, extra_s=1.0, use_d=False,
     checks=[exit_in(1), json_true("interrupted"), errors_at_least(4, "timeout"),
             reason_for("timeout", "3 s")])


def sigint_twice(first, second):
    def fault(ctx):
        time.sleep(first)
        ctx["hammer"].send_signal(signal.SIGINT)
        time.sleep(second - first)
        ctx["hammer"].send_signal(signal.SIGINT)
    return fault


# ... and a second one ends everything at once, JSON written.
case("sigint_twice_hm", "two SIGINTs while every action waits (--timeout 30s)",
     ["-t", "1", "-c", "4", "-d", "30s", "--timeout", "30s", "scenario", "counter"],
     srv("never-read", good_conns=3), fault=sigint_twice(1.0, 1.5), phases=0, extra_s=1.5,
     use_d=False, checks=[exit_in(1), json_true("interrupted")])


# ---- bench_app faults ---------------------------------------------------------

def app_kill(at):
    def fault(ctx):
        time.sleep(at)
        ctx["app"].kill()
        ctx["app"].wait()
    return fault


def app_stop(at, for_s):
    def fault(ctx):
        time.sleep(at)
        ctx["app"].send_signal(signal.SIGSTOP)
        time.sleep(for_s)
        ctx["app"].send_signal(signal.SIGCONT)
    return fault


def app_hang(at):
    """SIGSTOPs bench_app at `at` s for good (the teardown continues and
    ends it): its kernel still completes connects, nothing answers."""
    def fault(ctx):
        time.sleep(at)
        ctx["app"].send_signal(signal.SIGSTOP)
    return fault


def app_restart(at, down_s):
    def fault(ctx):
        time.sleep(at)
        ctx["app"].kill()
        ctx["app"].wait()
        time.sleep(down_s)
        ctx["app"] = ctx["start_app"]()
    return fault


FHM = ["-t", "1", "-c", "8", "-d", "4s", "--timeout", "1s", "scenario", "counter"]
FBR = ["-t", "1", "--mode", "browser", "-c", "8", "-d", "4s", "--timeout", "1s",
       "scenario", "counter"]
KILLED = [exit_in(1), json_at_least("actions.ok", 1),
          errors_at_least(1, "connect", "reset", "closed")]
case("fault_killed_hm", "bench_app SIGKILLed 1 s into a 4 s run (hammer mode)", FHM,
     "bench_app", fault=app_kill(1.0), checks=KILLED)
case("fault_killed_br", "bench_app SIGKILLed 1 s into a 4 s run (browser mode)", FBR,
     "bench_app", fault=app_kill(1.0), checks=KILLED, phases=4)
# A server that dies for good: once connects fail and nothing succeeded
# for --timeout, the run stops (long before its -d of 30 s) and says the
# target stopped answering, in every load model.
DEAD = [exit_in(1), fatal_matches("^target stopped answering"),
        output_matches(r"target stopped answering"), json_at_least("actions.ok", 1)]
for m, what in (("hm", "hammer mode"), ("br", "browser mode"), ("get", "get")):
    case("fault_dead_" + m, "bench_app SIGKILLed 1 s into a 30 s run (%s): the run stops" % what,
         model_args(m, "-c", "8", "-d", "30s", "--timeout", "1s"), "bench_app",
         fault=app_kill(1.0), checks=DEAD, phases=4, path="/_health" if m == "get" else "",
         php_via=m != "get")
# A server that hangs for good (SIGSTOP): connects still complete (the
# kernel's backlog) and nothing answers; once nothing succeeded for twice
# --timeout the run stops and says so, in every load model (a browser VU
# would otherwise reload its page forever).
HUNG = [exit_in(1), fatal_matches("^target stopped answering: connections open"),
        output_matches(r"target stopped answering"), json_at_least("actions.ok", 1)]
for m, what in (("hm", "hammer mode"), ("br", "browser mode"), ("get", "get")):
    case("fault_hung_" + m, "bench_app SIGSTOPped 1 s into a 30 s run for good (%s): the run "
         "stops" % what,
         model_args(m, "-c", "8", "-d", "30s", "--timeout", "1s"), "bench_app",
         fault=app_hang(1.0), checks=HUNG, phases=6, path="/_health" if m == "get" else "",
         php_via=m != "get")
case("fault_stopped_ride_through_hm",
     "bench_app SIGSTOPped 5 s (from 1 s) under --timeout 8s: nothing is lost",
     ["-t", "1", "-c", "8", "-d", "4s", "--timeout", "8s", "scenario", "counter"],
     "bench_app", fault=app_stop(1.0, 5.0), phases=1, extra_s=5.0,
     checks=[exit_in(0), errors_none])
case("fault_stopped_hm", "bench_app SIGSTOPped 5 s (from 1 s) under --timeout 1s", FHM,
     "bench_app", fault=app_stop(1.0, 5.0), extra_s=5.0,
     checks=[exit_in(1), json_at_least("actions.ok", 1), errors_at_least(1, "timeout", "connect")])
case("fault_stopped_br", "bench_app SIGSTOPped 5 s (from 1 s) under --timeout 1s (browser)",
     FBR, "bench_app", fault=app_stop(1.0, 5.0), extra_s=5.0, phases=4,
     checks=[exit_in(1), json_at_least("actions.ok", 1), errors_at_least(1, "timeout", "connect")])
def answered_after_restart(r):
    """The new bench_app knows no context: actions it answers get 400, or
    the stream gets the reload script first (a context found lost)."""
    by = r.j("actions.by_status") or {}
    lost = r.j("disruption.context_lost", 0)
    return "400" in by or "403" in by or lost > 0, \
        "by_status %s, %d contexts lost; want 400/403 or a lost context" % (by, lost)
answered_after_restart.label = "served after restart"


# ---- issue 12: a lost context is reloaded, as a browser does -------------------

def app_restart_until_served(at, down_s, served, cap_s):
    """Kills bench_app at `at` s, starts it again on its port down_s later,
    waits until the new one has answered `served` requests (hammer found
    the context lost, reloaded and went on), then SIGINTs hammer. The run
    ends by hammer's progress, not by a -d that a busy machine may spend
    on starting bench_app again; cap_s only stops a run that never gets
    there (the checks then fail)."""
    def fault(ctx):
        time.sleep(at)
        ctx["app"].kill()
        ctx["app"].wait()
        time.sleep(down_s)
        ctx["app"] = ctx["start_app"]()
        deadline = time.monotonic() + cap_s
        while time.monotonic() < deadline:
            if local_server.requests_served(ctx["port"]) >= served:
                break
            time.sleep(0.1)
        ctx["hammer"].send_signal(signal.SIGINT)
    return fault


RESTART_CAP_S = 60.0
RESTART = app_restart_until_served(1.0, 0.5, 400, RESTART_CAP_S)

def status_at_most(code, per_vu, what):
    """At most per_vu x -c answers of `code`: a burst at the restart, not the rest of the run."""
    def check(r):
        c = int(opt_value(CASES[r.case]["hammer"], "-c") or 1)
        n = (r.j("actions.by_status") or {}).get(str(code), 0)
        return n <= per_vu * c, "HTTP %d x%d, want <= %d (%s)" % (code, n, per_vu * c, what)
    check.label = "HTTP %d burst" % code
    return check


def status_more_than(code, per_vu, what):
    def check(r):
        c = int(opt_value(CASES[r.case]["hammer"], "-c") or 1)
        n = (r.j("actions.by_status") or {}).get(str(code), 0)
        return n > per_vu * c, "HTTP %d x%d, want > %d (%s)" % (code, n, per_vu * c, what)
    check.label = "HTTP %d counted" % code
    return check


def json_equals(key, want):
    def check(r):
        v = r.j(key)
        return v == want, "%s = %r, want %r" % (key, v, want)
    check.label = key
    return check


def outage_window(r):
    """disruption.outage brackets the failures, inside the run."""
    o = r.j("disruption.outage")
    if not isinstance(o, dict):
        return False, "disruption.outage = %r, want the window" % o
    first, last, dur = o.get("first_failure_s"), o.get("last_failure_s"), o.get("duration_s")
    ok = 0 < first <= last and abs((last - first) - dur) < 1e-3
    return ok, "failures from %.3f s to %.3f s (%.3f s)" % (first, last, dur)
outage_window.label = "outage window"


def goes_on_after_outage(r):
    """Some interval after the last failure counted OK actions: the run went on."""
    last = r.j("disruption.outage.last_failure_s", 1e9)
    after = [p for p in (r.j("intervals") or []) if p.get("t", 0) > last and p.get("ok", 0) > 0]
    return bool(after), "%d intervals with OK actions after the last failure (%.3f s)" % (
        len(after), last)
goes_on_after_outage.label = "run went on"


# A restart loses every context: each VU (browser) or the shared context
# (hammer) reloads the page with its cookies and goes on. Each sender or VU
# has at most one action in flight when its context dies, so the 400s stay
# within 2 x -c; the rest of the run is OK again and checked.
RELOADED = [exit_in(1), json_at_least("disruption.context_lost", 1),
            json_at_least("disruption.reloads", 1), json_at_least("disruption.recovery_us.count", 1),
            status_at_most(400, 2, "one lost context per VU or sender"), outage_window,
            goes_on_after_outage, json_true("check.passed"),
            output_matches(r"^Disruption +failures from \d+\.\d+ s to \d+\.\d+ s"),
            output_matches(r"^ +\d+ contexts lost, [1-9]\d* pages reloaded"),
            output_matches(r"^Recovery +\d+ episodes"),
            output_matches(r"^\[ *\d+\.\ds\].*  failed \d+"),
            output_matches(r"^\[ *\d+\.\ds\].*  reloads [1-9]")]
# -d 300s is only a ceiling: RESTART ends the run with SIGINT once the new
# bench_app has served 400 requests. --timeout 30s is far above what a
# loaded machine needs to start bench_app again, so the liveness watch
# (connects failing for --timeout) never ends the run first.
RHM = ["-t", "1", "-c", "8", "-d", "300s", "--timeout", "30s"]
RBR = ["-t", "1", "--mode", "browser", "-c", "8", "-d", "300s", "--timeout", "30s"]
RESTART_KW = dict(fault=RESTART, use_d=False, extra_s=1.5 + RESTART_CAP_S)
case("restart_reload_hm", "bench_app restarted at 1 s: the context is reloaded (hammer mode)",
     RHM + ["--interval", "1s", "scenario", "counter"], "bench_app", checks=RELOADED,
     **RESTART_KW)
case("restart_reload_br", "bench_app restarted at 1 s: every VU reloads its page (browser)",
     RBR + ["--interval", "1s", "scenario", "counter"], "bench_app", phases=4, checks=RELOADED,
     **RESTART_KW)
case("restart_reload_flow_br", "bench_app restarted at 1 s: flow VUs reload and go on",
     RBR + ["--interval", "1s", "flow",
            os.path.join(HERE, "..", "..", "examples", "flows", "counter.yaml")],
     "bench_app", phases=4, checks=RELOADED, **RESTART_KW)
# --no-reload: the loss is counted and every later action gets 400.
NOT_RELOADED = [exit_in(1), json_at_least("disruption.context_lost", 1),
                json_equals("disruption.reloads", 0),
                status_more_than(400, 4, "no reload: the dead context answers 400 to the end"),
                outage_window]
case("restart_no_reload_hm", "bench_app restarted at 1 s under --no-reload (hammer mode)",
     RHM + ["--no-reload", "scenario", "counter"], "bench_app", checks=NOT_RELOADED,
     **RESTART_KW)
case("restart_no_reload_br", "bench_app restarted at 1 s under --no-reload (browser)",
     RBR + ["--no-reload", "scenario", "counter"], "bench_app", phases=4, checks=NOT_RELOADED,
     **RESTART_KW)


# Browser VUs may sit out the short outage waiting for a patch, so only
# hammer mode must see a failed request; both must reconnect and go on.
# Like the reload cases above, the run ends by progress (SIGINT once the new
# bench_app has served 100 requests), not by a -d that a busy machine may
# spend starting bench_app again.
RESTARTED = [exit_in(1), json_at_least("actions.ok", 1), json_at_least("connections.reconnects", 1),
             answered_after_restart]
RESTART_100 = dict(fault=app_restart_until_served(1.0, 0.5, 100, RESTART_CAP_S), use_d=False,
                   extra_s=1.5 + RESTART_CAP_S)
case("fault_restarted_hm", "bench_app killed at 1 s and restarted on its port 0.5 s later",
     RHM + ["scenario", "counter"], "bench_app",
     checks=RESTARTED + [errors_at_least(1, "connect", "reset", "closed")], **RESTART_100)
case("fault_restarted_br", "bench_app killed at 1 s and restarted 0.5 s later (browser)",
     RBR + ["scenario", "counter"], "bench_app", checks=RESTARTED, phases=4, **RESTART_100)


# ---- status lines, codings and upgrades a client must not take at face value ---

# RFC 9110 §15: 000 and 999 are no status at all: a protocol error with its
# reason and the status line, never an unexplained "other".
for _code in ("000", "999"):
    each_model("status_%s" % _code, "every request answers HTTP/1.1 %s" % _code,
               "status-" + _code, ("hm", "br", "get"),
               checks=[exit_in(1), errors_at_least(1, "protocol"),
                       reason_for("protocol", r"status outside 100-599"),
                       json_equals("errors.other", 0), status_absent(int(_code)),
                       output_matches(r"HTTP/1\.1 %s Odd" % _code)])

# A gzip page for a request that offered no Accept-Encoding: RFC 9110
# §12.5.3 lets the server code it, so hammer decodes it and runs.
each_model("gzip_unoffered", "the page comes gzip though no Accept-Encoding was sent",
           "gzip-unoffered", ("hm", "br"),
           checks=[exit_in(0), errors_none, json_at_least("bytes.compressed", 1),
                   output_matches(r"^Compression +")])

# After a 101 the connection speaks another protocol: hammer retires it and
# sends the next request on a new one, so every request gets its 101 at
# once (none waits out --timeout on the handed-over connection). A request
# sent there never gets an answer, whatever --timeout is: 5 s, so that a
# loaded machine slow to run the server's thread per connection (get
# opens ~200) is not taken for one.
SWITCH_ARGS = {"hm": model_args("hm", "-c", "4", "-n", "200", "-d", "2s", "--timeout", "5s"),
               "br": model_args("br", "-c", "4", "-n", "40", "-d", "2s", "--timeout", "5s"),
               "get": model_args("get", "-c", "4", "-n", "200", "-d", "2s", "--timeout", "5s")}
each_model("switching_101", "every request answers 101 Switching Protocols", "switching-101",
           ("hm", "br", "get"), args=SWITCH_ARGS,
           checks=[exit_in(1), status_is_all(101), json_equals("errors.timeout", 0)])

# A refused connect is a connect attempt, not an action: while bench_app is
# down no action is counted (errors.connect stays 0), the attempts are
# counted apart and back off (10 ms doubling to 250 ms), so a connection
# makes at most a few over the outage the same run measured.
def connect_attempts_backed_off(r):
    n = r.j("disruption.connect_failures")
    dur = r.j("disruption.outage.duration_s", 0) or 0
    c = int(opt_value(CASES[r.case]["hammer"], "-c") or 1)
    cap = c * (dur / 0.25 + 8)
    return isinstance(n, int) and 1 <= n <= cap, \
        "disruption.connect_failures = %r over a %.2f s outage, want 1..%d" % (n, dur, cap)
connect_attempts_backed_off.label = "connect attempts"
CONNECT_ATTEMPTS = [exit_in(1), json_at_least("actions.ok", 1), json_equals("errors.connect", 0),
                    connect_attempts_backed_off,
                    output_matches(r"^Disruption .*; \d+ connect attempts failed, each retried"),
                    output_matches(r"^(Actions|Requests) sent +\d+ \(and \d+ connect attempts "
                                   r"that failed, not counted"),
                    output_matches(r"^Connections .*, [1-9]\d* failed$")]
RESTART_DOWN = dict(fault=app_restart_until_served(1.0, 1.0, 100, RESTART_CAP_S), use_d=False,
                    extra_s=2.0 + RESTART_CAP_S)
# The connections beyond -c and the observer (the set-up page load, the
# reload's; browser: the reloaded pages' streams) are said on the line.
CONNS_WHY = output_matches(r"^Connections +\d+ requested, \d+ established \(\d+ for ")
case("restart_connect_attempts_hm", "bench_app down 1 s: refused connects are attempts, not actions",
     RHM + ["scenario", "counter"], "bench_app", checks=CONNECT_ATTEMPTS + [CONNS_WHY],
     **RESTART_DOWN)
case("restart_connect_attempts_get", "a GET flood over a 1 s outage: attempts, not requests",
     ["-t", "1", "-c", "8", "-d", "300s", "--timeout", "30s", "scenario", "get"], "bench_app",
     path="/_health", checks=CONNECT_ATTEMPTS, **RESTART_DOWN)
case("restart_connect_attempts_br", "bench_app down 1 s in browser mode: attempts, not actions",
     RBR + ["scenario", "counter"], "bench_app", phases=4,
     checks=[exit_in(1), json_equals("errors.connect", 0), json_at_least("actions.ok", 1),
             json_at_least("disruption.connect_failures", 1), CONNS_WHY], **RESTART_DOWN)

# A stream that repeats its state: the repeat answers no action and is
# counted apart, on the same summary line. (server.py sends one patch per
# change it sees, so one patch may carry several actions: the line says
# why action->patch times more actions than there are patches.)
def patches_answer_actions(r):
    ok, seen, extra = r.j("actions.ok"), r.j("patches.observed"), r.j("patches.extra")
    timed = r.j("latency_us.patch.count")
    good = isinstance(seen, int) and 0 < seen <= ok and extra == 1 and timed == ok
    line = next((l for l in r.out.splitlines() if l.startswith("Patches observed")), "")
    if timed != seen and "action->patch times %s: " % timed not in line:
        good = False
    return good, "patches.observed %r, actions.ok %r, patches.extra %r, action->patch %r: %s" % (
        seen, ok, extra, timed, line)
patches_answer_actions.label = "patches per action"
case("sse_repeat_value", "a stream that sends its state twice: one patch per action",
     ["-t", "1", "-c", "4", "-n", "200", "--timeout", "5s", "scenario", "counter"],
     srv("sse-repeat-value"),
     checks=[exit_in(0), patches_answer_actions,
             output_matches(r"^Patches observed +\d+ .*\+ 1 that answered no action")])

# A tab whose page does not load is reloaded with the back-off, as a user
# reloads a tab that shows an error: the first two page loads answer 500,
# those VUs load their page on the next try and do their work. The failed
# loads are counted and fail the check, with the count in its words.
def every_vu_worked(r):
    # Which of the two 500s a first load gets and which a tab's reload gets
    # is the scheduler's choice; either way every tab loads and works.
    reloads = r.j("disruption.reloads", 0) or 0
    detail = r.j("check.detail") or ""
    vus = opt_value(CASES[r.case]["hammer"], "-c")
    return reloads >= 1 and detail.startswith("%s/%s VUs passed, " % (vus, vus)), \
        "disruption.reloads %s, check.detail %r" % (reloads, detail)
every_vu_worked.label = "every VU worked"
# -d, not -n: the other tabs must not spend the run before the back-off ends.
# The hammer model has no tabs: its one page load is set-up (all_500_page).
each_model("page_fails_once", "the first two page loads answer 500: those tabs are reloaded",
           "all-500", ("br",), srv_kw=dict(where="page", times=2), phases=5,
           args={"br": model_args("br", "-c", "4", "-d", "2s", "--timeout", "1s")},
           checks=[exit_in(1), every_vu_worked,
                   output_matches(r"^Check +.*FAIL.* VUs passed, [12] page loads failed, "),
                   output_matches(r"^Net increment +\d+ .*matches HTTP OK: YES")])

# A page load the server never answers (closed before any byte, as in a
# restart) is the server away, not a bad page: those tabs reload with the
# back-off and work, the check passes, and the run fails naming the page
# load attempts (the one misbehaviour each: a tab's first load, or the
# reload after it).
each_model("page_dropped_once", "the first two page loads are closed unanswered: those tabs "
           "are reloaded", "close-unanswered", ("br",), srv_kw=dict(where="page", times=2),
           phases=5, args={"br": model_args("br", "-c", "4", "-d", "2s", "--timeout", "1s")},
           checks=[exit_in(1), every_vu_worked, json_true("check.passed"),
                   json_equals("disruption.reload_failures", 2),
                   output_matches(r"^  - 2 page load attempts for a new context failed "
                                  r"\(see Disruption\)$")])

# A page slower than --timeout on every load, in a run that ends while the
# tab is still reloading it: the tab's failure names why its loads failed,
# not only that the run ended first.
each_model("page_slow_reloading", "every page load dribbles past --timeout", "slow-bytes",
           ("br",), srv_kw=dict(where="page"), phases=5,
           args={"br": model_args("br", "-c", "4", "-d", "2s", "--timeout", "1s")},
           checks=[exit_in(1), json_equals("actions.sent", 0),
                   output_matches(r"^Check +.*FAIL.* 0/4 VUs passed, [1-9]\d* page loads failed"),
                   detail_or_fatal_matches(r"its page did not load before the run ended: .*"
                                           r"no complete response within 1 s")])


# ---- hostile peers: codings and SSE framing (docs/reliability.md) -----------

# A page in a coding hammer does not decode (stacked, unknown) is refused
# naming the coding, never taken raw for the page; a gzip bomb stops at the
# 8 MiB body bound with its reason. The hammer model's one page load is
# set-up (exit 2, fatal); a browser tab's is its own work, not reloaded as
# no reload can help (exit 1, the check's first failure).
def coding_refused(want):
    return lambda m: [exit_in(2 if m == "hm" else 1),
                      (fatal_matches if m == "hm" else detail_or_fatal_matches)(want),
                      json_equals("actions.sent", 0)]


for _stem, _mode, _want in (("stacked", "coding-stacked", r'"gzip, br": a coding hammer does '
                             r'not decode'),
                            ("zstd", "coding-zstd", r'"zstd": a coding hammer does not decode'),
                            ("x_foo", "coding-x-foo", r'"x-foo": a coding hammer does not decode'),
                            ("gzip_bomb", "gzip-bomb", r"decoded body over the size limit")):
    each_model("coding_" + _stem, "the page comes " + _mode, _mode, ("hm", "br"),
               checks=coding_refused(_want))

# An SSE stream whose one gzip chunk decodes past the per-read bound.
each_model("sse_gzip_bomb", "/_sse: sse-gzip-bomb", "sse-gzip-bomb", ("hm", "br"),
           checks=[exit_in(1), sse_failures_at_least(1, "protocol"),
                   sse_reason(r"expands past the limit of one read")])


def patches_all_seen(r):
    ok, seen, timed = r.j("actions.ok"), r.j("patches.observed"), r.j("latency_us.patch.count")
    good = isinstance(ok, int) and ok > 0 and timed == ok and 0 < (seen or 0) <= ok
    return good, "actions.ok %r, patches.observed %r, action->patch %r" % (ok, seen, timed)
patches_all_seen.label = "patches counted"

# CR, CRLF and LF line ends in one stream; a BOM mid-stream (not stripped:
# the decoy it starts is no patch); retry: 10^30 (saturates, no overflow);
# an id: with a NUL (ignored): every action's patch is seen, nothing else.
SSE_OK = [exit_in(0), errors_none, patches_all_seen, json_equals("patches.extra", 0),
          json_equals("sse.first_failure", None)]
SSE_N = {m: model_args(m, "-c", "4", "-n", "60", "--timeout", "5s") for m in ("hm", "br")}
for _stem, _mode in (("line_ends_mixed", "sse-line-ends-mixed"), ("bom_mid", "sse-bom-mid"),
                     ("retry_huge", "sse-retry-huge"), ("id_nul", "sse-id-nul")):
    each_model("sse_" + _stem, "/_sse: " + _mode, _mode, ("hm", "br"), args=SSE_N,
               checks=SSE_OK)

# After the page's state, a stream stuck in a line that never ends (or in
# heartbeats only): the run must not say "failures: none" over no patch.
# -d, not -n: the line's quiet time is the run's, well past --timeout.
SSE_D = {m: model_args(m, "-c", "4", "-d", "3s", "--timeout", "1s") for m in ("hm", "br")}
each_model("sse_endless_line", "/_sse: one line that never ends, dripped", "sse-endless-line",
           ("hm", "br"), args=SSE_D,
           checks=[exit_in(1), sse_failures_at_least(1, "timeout"),
                   sse_reason(r"inside an unfinished line or event of \d+ bytes, "
                              r"\d+\.\d s after its last complete event"),
                   json_at_least("sse.ended_mid_event", 1),
                   json_at_least("sse.ended_mid_event_bytes", 16),
                   output_matches(r"^SSE streams .*failures: timeout ×\d+; \d+ ended by the run "
                                  r"inside an unfinished line or event \(up to \d+ bytes\)")])
each_model("sse_comments_forever", "/_sse: only heartbeats after the state",
           "sse-comments-forever", ("hm", "br"), args=SSE_D,
           checks=[exit_in(1), json_equals("patches.observed", 0),
                   output_matches(r"^Check +.*FAIL"), json_at_least("sse.ended_comments_only", 1),
                   output_matches(r"^SSE streams .*; [1-9]\d* sent only comments for longer than "
                                  r"--timeout before the run ended")])


# ---- running one case ---------------------------------------------------------


def start_server(opts, port=0):
    argv = [sys.executable, os.path.join(HERE, "server.py"), "--port", str(port)]
    for k, v in opts.items():
        argv += ["--" + k.replace("_", "-"), str(v)]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = p.stdout.readline().strip()
    if not line.isdigit():
        p.kill()
        raise RuntimeError("server.py did not start: %r" % line)
    return p, int(line)


def stop_server(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        out, _ = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    for line in out.splitlines():
        if line.startswith("STATS "):
            return json.loads(line[6:])
    return {}


def start_bench_app(bench_app, port):
    p = subprocess.Popen([bench_app, "--port", str(port)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    local_server.wait_listening(p, port, "bench_app")
    return p


def engine_missing(hammer, hargs):
    """Why the engine hargs name cannot run here (hammer refuses an
    --engine io_uring the kernel lacks), or None."""
    eng = opt_value(hargs, "--engine")
    if not eng:
        return None
    p = subprocess.run([hammer, "--engine", eng, "--version"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return None if p.returncode == 0 else p.stdout.strip() or "exit %d" % p.returncode


def run_case(name, opts):
    """True when every check held, False when one failed, None: skipped."""
    c = CASES[name]
    hargs = c["hammer"]
    missing = engine_missing(opts.hammer, hargs)
    if missing:
        print("SKIP %s: the engine is not available here: %s" % (name, missing), flush=True)
        return None
    d = parse_duration(opt_value(hargs, "-d", "--duration") or "0")
    timeout = parse_duration(opt_value(hargs, "--timeout") or "5s")
    slack = SLACK_S * (2 if opts.sanitized else 1)
    r = Run()
    r.case = name
    r.bound = (d if c["use_d"] else 0) + c["phases"] * timeout + c["extra_s"] + slack
    tmp = tempfile.mkdtemp(prefix="hammer-misbehave-")
    json_path = os.path.join(tmp, "run.json")

    server = app = None
    ctx = {}
    if isinstance(c["server"], dict):
        server, port = start_server(c["server"])
    elif c["server"] == "bench_app":
        port = local_server.free_port_below_ephemeral()
        ctx["start_app"] = lambda: start_bench_app(opts.bench_app, port)
        ctx["port"] = port
        ctx["app"] = app = ctx["start_app"]()
    else:
        port = local_server.free_port()  # nothing listens there
    argv = [opts.hammer, "--url", "http://127.0.0.1:%d%s" % (port, c["path"]),
            "--json", json_path] + hargs
    env = dict(os.environ)
    if opts.sanitized:
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=32"
    print("$ " + " ".join(argv), flush=True)

    t0 = time.monotonic()
    hp = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    chunks = []
    reader = threading.Thread(target=lambda: chunks.append(hp.stdout.read()), daemon=True)
    reader.start()
    ctx["hammer"] = hp
    fault_thread = None
    if c["fault"]:
        fault_thread = threading.Thread(target=c["fault"], args=(ctx,), daemon=True)
        fault_thread.start()
    hard_limit = r.bound + opts.hard_limit
    status = rusage = None
    while True:
        pid, status, rusage = os.wait4(hp.pid, os.WNOHANG)
        if pid == hp.pid:
            break
        if time.monotonic() - t0 > hard_limit:
            r.killed_at_limit = True
            hp.kill()
            _, status, rusage = os.wait4(hp.pid, 0)
            break
        time.sleep(0.02)
    r.duration = time.monotonic() - t0
    hp.returncode = status  # Popen must not wait for it again
    reader.join(5)
    r.out = (chunks[0] if chunks else b"").decode("utf-8", "replace")
    r.rss_mb = rusage.ru_maxrss / 1024.0
    if os.WIFSIGNALED(status):
        r.signaled = os.WTERMSIG(status)
        r.exit = 128 + r.signaled
    else:
        r.exit = os.WEXITSTATUS(status)
    if fault_thread:
        fault_thread.join(30)
    if server:
        r.server_stats = stop_server(server)
    if c["server"] == "bench_app":
        if ctx["app"] is not app:  # restarted: what the new instance served
            r.server_stats = local_server.health(port)
        for p in {id(app): app, id(ctx["app"]): ctx["app"]}.values():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    try:
        with open(json_path) as f:
            r.json = json.load(f)
    except (OSError, ValueError) as e:
        r.json_error = str(e)
    if not opts.keep:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)

    print(r.out.rstrip())
    print("--- %s: %s" % (name, c["doc"]))
    failed = []
    for check in c["checks"]:
        try:
            ok, detail = check(r)
        except Exception as e:  # a check that cannot evaluate is a failure
            ok, detail = False, "check raised %r" % e
        label = getattr(check, "label", getattr(check, "__name__", "check"))
        print("%s  %-22s %s" % ("PASS" if ok else "FAIL", label, detail))
        if not ok:
            failed.append("%s: %s" % (label, detail))
    summary = {"case": name, "passed": not failed, "exit": r.exit, "signal": r.signaled,
               "duration_s": round(r.duration, 2), "bound_s": round(r.bound, 1),
               "rss_mb": round(r.rss_mb, 1), "json": r.json is not None,
               "server": r.server_stats, "failed": failed}
    print("RESULT " + json.dumps(summary), flush=True)
    return not failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hammer")
    ap.add_argument("--bench-app")
    ap.add_argument("--sanitized", action="store_true",
                    help="hammer is an ASan/UBSan build: double the slack, cap the quarantine")
    ap.add_argument("--hard-limit", type=float, default=15.0,
                    help="kill hammer this many seconds after its bound (default 15)")
    ap.add_argument("--keep", action="store_true", help="keep the JSON files")
    ap.add_argument("--list", action="store_true", help="print the case names")
    ap.add_argument("cases", nargs="*")
    opts = ap.parse_args()
    if opts.list:
        print("\n".join(CASES))
        return 0
    if not opts.hammer or not opts.bench_app or not opts.cases:
        ap.error("--hammer, --bench-app and at least one CASE are needed")
    unknown = [n for n in opts.cases if n not in CASES]
    if unknown:
        ap.error("unknown case(s): %s (see --list)" % ", ".join(unknown))
    results = [run_case(name, opts) for name in opts.cases]
    if False in results:
        return 1
    return 77 if all(r is None for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
