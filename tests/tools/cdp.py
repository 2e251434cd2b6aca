"""A headless Chromium driven over the DevTools protocol, Python standard
library only, for hammer's report tests (tests/test_report_browser.py) and
`make report-screenshots` (tests/tools/report_screenshots.py).

Chromium runs with --remote-debugging-pipe: it reads protocol messages
(JSON, each ended by a NUL byte) on fd 3 and writes its answers and events
on fd 4, so no port is opened and no WebSocket is needed. It gets a fresh
profile directory and every flag that keeps it off the network.
"""

import base64
import json
import os
import select
import shutil
import signal
import tempfile
import time

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
    "--remote-debugging-pipe",
]


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One Chromium process; pages are opened one at a time."""

    def __init__(self, exe, timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="hm_chromium_")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                # via fresh numbers first: one of them may already be 3 or 4,
                # and dup2 onto itself would keep its close-on-exec flag
                r, w = os.dup(to_chrome_r), os.dup(from_chrome_w)
                os.dup2(r, 3)
                os.dup2(w, 4)
                os.set_inheritable(3, True)
                os.set_inheritable(4, True)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                for fd in range(5, 256):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                os.execv(exe, [exe] + FLAGS + ["--user-data-dir=" + self.profile, "about:blank"])
            finally:
                os._exit(127)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def _send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self.from_chrome], [], [], left)
            if ready:
                chunk = os.read(self.from_chrome, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed its pipe (did it start?)")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True):
        """Sends a command and returns its result (raises on an error)."""
        want = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._read_message(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method):
        deadline = time.monotonic() + self.timeout
        for i, ev in enumerate(self.events):
            if ev["method"] == method:
                del self.events[i]
                return ev
        while True:
            msg = self._read_message(deadline)
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self.events.append(msg)

    def open(self, url, width, height=900, mobile=False):
        """Opens url in a fresh tab of the given viewport and waits for load."""
        if self.session:
            self.call("Target.closeTarget", {"targetId": self.target}, session=False)
            self.session = None
        self.target = self.call("Target.createTarget", {"url": "about:blank"},
                                session=False)["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": self.target, "flatten": True},
                                 session=False)["sessionId"]
        self.events = []
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
        self.call("Page.enable")
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def eval(self, expression):
        """The value of a JavaScript expression in the open page."""
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in res:
            raise RuntimeError("script failed: %s" % res["exceptionDetails"])
        return res["result"].get("value")

    def screenshot(self, path, width):
        """The whole page, width pixels wide, as a PNG."""
        height = int(self.eval("document.documentElement.scrollHeight"))
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        data = self.call("Page.captureScreenshot",
                         {"format": "png", "captureBeyondViewport": True,
                          "clip": {"x": 0, "y": 0, "width": width, "height": height,
                                   "scale": 1}})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return height

    def close(self):
        try:
            self._send("Browser.close", session=False)
        except OSError:
            pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.05)
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        for fd in (self.to_chrome, self.from_chrome):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)
