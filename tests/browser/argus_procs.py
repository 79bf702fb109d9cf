"""Real argus-server / argus-worker processes for Python-driven tests.

Starts the binaries from the build tree on loopback with their logs in a
temp directory, waits for their start-up lines, and kills them at the end.
Nothing is mocked. Used by tests/browser and clients/python tests.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time


class Cluster:
    def __init__(self, bin_dir, keep=False):
        self.bin_dir = bin_dir
        self.dir = tempfile.mkdtemp(prefix="argus-py-")
        self.procs = []
        self.keep = keep
        self.grpc = None
        self.http = None

    @property
    def db(self):
        return os.path.join(self.dir, "argus.db")

    def _start(self, name, argv):
        log = open(os.path.join(self.dir, name + ".log"), "wb")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(p)
        return p

    def log(self, name):
        try:
            with open(os.path.join(self.dir, name + ".log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def kill_server(self):
        os.killpg(self.server.pid, signal.SIGKILL)
        self.server.wait()

    def start_server(self, http=True, extra=(), listen="127.0.0.1:0"):
        """Starts argus-server (on `listen`; e.g. the old address to restart)."""
        os.makedirs(self.dir, exist_ok=True)
        self.starts = getattr(self, "starts", 0) + 1
        if self.starts > 1:
            os.replace(os.path.join(self.dir, "server.log"),
                       os.path.join(self.dir, "server-%d.log" % (self.starts - 1)))
        argv = [os.path.join(self.bin_dir, "argus-server"), "--listen", listen,
                "--db", self.db, "--heartbeat_ms", "200", "--lease_ms", "2000"]
        if http:
            # A local test server without tokens: the dashboard is opened explicitly.
            argv += ["--http", "127.0.0.1:0", "--open_dashboard"]
        argv += list(extra)
        self.server = self._start("server", argv)
        deadline = time.time() + 20
        while time.time() < deadline:
            text = self.log("server")
            m = re.search(r"listening on (\S+)\n", text)
            h = re.search(r"http on (\S+)\n", text)
            if m and (h or not http):
                self.grpc = m.group(1)
                self.http = h.group(1) if h else None
                return
            if self.server.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("argus-server did not start:\n" + self.log("server"))

    def start_worker(self):
        return self._start("worker-%d" % len(self.procs),
                           [os.path.join(self.bin_dir, "argus-worker"), "--server", self.grpc])

    def wait_workers(self, n=1, timeout=20):
        """Waits until n workers are registered and alive."""
        import json
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = self.cli("workers", "--json", timeout=10)
            if r.returncode == 0:
                alive = [w for w in json.loads(r.stdout or "{}").get("workers", []) if w.get("alive")]
                if len(alive) >= n:
                    return
            time.sleep(0.1)
        raise RuntimeError("%d worker(s) did not register:\n%s" % (n, self.log("worker-1")))

    def report_failure(self):
        """Prints the exception being handled and the tail of every log."""
        import traceback
        traceback.print_exc()
        for name in sorted(os.listdir(self.dir)):
            if name.endswith(".log"):
                print("---- %s ----\n%s" % (name, self.log(name[:-4])[-3000:]))

    def cli(self, *args, timeout=60):
        argv = [os.path.join(self.bin_dir, "argus")] + list(args) + ["--server", self.grpc]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def check(cond, what):
    """Fails the test with `what` unless cond; prints `ok: what` otherwise."""
    if not cond:
        raise AssertionError(what)
    print("ok:", what)


def run_checks(cluster, body):
    """Runs body(cluster) inside the cluster; a failure prints the exception and
    every log. Returns the process exit code (0 and PASS when it passed)."""
    with cluster as c:
        try:
            body(c)
        except Exception:  # noqa: BLE001
            c.report_failure()
            return 1
    print("PASS")
    return 0
