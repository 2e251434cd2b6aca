"""A server the test runners start on 127.0.0.1 (bench_app, a scripted
peer): a port to give it, the wait until it listens, and bench_app's
/_health. Shared by tests/misbehave/run_case.py and
tests/consistency/run_path.py; the caller owns the processes it starts."""

import json
import os
import random
import socket
import ssl
import time


def free_port():
    """A port nothing listens on now (the kernel's choice)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def free_port_below_ephemeral():
    """A free port below the ephemeral range, for a server that restarts:
    while it is down, hammer's connects to an ephemeral port may be given
    that very port as their source (a TCP self-connect), which then holds
    it and the new server cannot bind."""
    lo = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    rng = random.Random(os.getpid() ^ int(time.monotonic() * 1e6))
    for _ in range(200):
        port = rng.randrange(10000, max(lo, 10001))
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            s.close()
    return free_port()


def wait_listening(p, port, what="the server"):
    """Waits until process p accepts connections on port; seconds it took.
    No bound of its own (CONTRIBUTING.md): a loaded machine may take long
    to start it; ctest's TIMEOUT catches a hang, the exit a failure."""
    t0 = time.monotonic()
    while p.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return time.monotonic() - t0
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("%s exited (%s) before it listened on %d" % (what, p.returncode, port))


def health(port, cafile=None):
    """bench_app's /_health as a dict ({} when it does not answer); over
    TLS when cafile (the CA that signed its certificate) is given."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        if cafile:
            ctx = ssl.create_default_context(cafile=cafile)
            ctx.set_alpn_protocols(["http/1.1"])
            s = ctx.wrap_socket(s, server_hostname="127.0.0.1")
        s.sendall(b"GET /_health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        return json.loads(data.partition(b"\r\n\r\n")[2])
    except (OSError, ValueError, ssl.SSLError):
        return {}


def requests_served(port, cafile=None):
    """The sum of bench_app's workers' requests by /_health (0 when it
    does not answer)."""
    return sum(w.get("requests", 0) for w in health(port, cafile).get("workers", []))
