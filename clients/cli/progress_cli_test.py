#!/usr/bin/env python3
"""Live progress of tune jobs in `argus tune` and `argus watch`, against a real
argus-server (with its planner) and two real worker processes that run the
candidates on the reference interpreter.

Not a terminal: one parseable `progress job=... key=value ...` line per
change on stderr; the counts must add up and grow, the budget must shrink.
A terminal (a pty): one bar rewritten in place with carriage returns."""
import argparse
import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "browser"))
from argus_procs import Cluster, check, run_checks  # noqa: E402

LINE = re.compile(r"^progress job=(\S+) state=(\S+) tried=(\d+)/(\d+) verified=(\d+) rejected=(\d+) "
                  r"in_flight=(\d+) best=([\d.]+) elapsed_s=(\d+) candidates_left=(\d+) remaining_s=(\d+)$")


def parse(stderr):
    rows = []
    for line in stderr.splitlines():
        if line.startswith("progress "):
            m = LINE.match(line)
            if m is None:
                raise AssertionError("progress line does not parse: " + line)
            g = m.groups()
            rows.append({"job": g[0], "state": g[1], "tried": int(g[2]), "max": int(g[3]),
                         "verified": int(g[4]), "rejected": int(g[5]), "in_flight": int(g[6]),
                         "best": float(g[7]), "elapsed": int(g[8]), "left": int(g[9]),
                         "remaining": int(g[10])})
    return rows


def check_rows(rows, n, what):
    check(len(rows) >= 2, "%s: %d progress lines" % (what, len(rows)))
    pairs = list(zip(rows, rows[1:]))
    check(all(b["tried"] >= a["tried"] and b["elapsed"] >= a["elapsed"] and b["remaining"] <= a["remaining"]
              for a, b in pairs),
          "%s: tried %s and elapsed grow, remaining time shrinks" % (what, [r["tried"] for r in rows]))
    bad = [r for r in rows if r["verified"] + r["rejected"] != r["tried"] or r["max"] != n
           or r["left"] != n - r["tried"]]
    check(not bad, "%s: verified + rejected = tried, budget left = %d - tried (%s)" % (what, n, bad[:1]))
    last = rows[-1]
    check(last["state"] == "SUCCEEDED" and last["tried"] >= 1 and last["best"] > 0 and last["in_flight"] == 0
          and last["remaining"] == 0,
          "%s: ends SUCCEEDED with a best speed-up %.3f after %d candidates" % (what, last["best"], last["tried"]))


def tune_argv(a, c, n, shape="64x64x64"):
    return [os.path.join(a.bin, "argus"), "tune", "gemm", "--shape", shape, "--dtype", "f32", "--target", "interp",
            "--max_candidates", str(n), "--server", c.grpc]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--worker", required=True, help="argus-worker (run with --backend interp)")
    a = ap.parse_args()
    def body(c):
        c.start_server(http=False)
        for i in range(2):
            c._start("tune-worker-%d" % i, [a.worker, "--server", c.grpc, "--backend", "interp"])
        c.wait_workers(2)

        # 1. argus tune, not a terminal, and argus watch of the same job meanwhile.
        n = 8
        p = subprocess.Popen(tune_argv(a, c, n, "128x128x128"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = p.stdout.readline()
        m = re.match(r"job (j-\S+): tuning", first)
        check(m is not None, "argus tune names its job: " + first.strip())
        job = m.group(1)
        w = subprocess.run([os.path.join(a.bin, "argus"), "watch", job, "--server", c.grpc],
                           capture_output=True, text=True, timeout=120)
        out, err = p.communicate(timeout=120)
        check(p.returncode == 0, "argus tune succeeded: " + err[-500:])
        check("best kernel" in out and "[0]" in out, "argus tune printed its steps and the best kernel")
        check_rows(parse(err), n, "argus tune")
        check(w.returncode == 0, "argus watch succeeded: " + w.stderr[-300:])
        rows = parse(w.stderr)
        check(all(r["job"] == job for r in rows), "argus watch follows the job")
        check_rows(rows, n, "argus watch")

        # 2. argus watch --json: each event carries the tune progress.
        w = subprocess.run([os.path.join(a.bin, "argus"), "watch", job, "--json", "--server", c.grpc],
                           capture_output=True, text=True, timeout=60)
        ev = json.loads(w.stdout.splitlines()[-1])
        check(ev["tune"]["tried"] == rows[-1]["tried"] and ev["tune"]["maxCandidates"] == n
              and ev["tune"]["bestRatio"] > 0 and "elapsedMs" in ev,
              "argus watch --json: the event has tune.tried/maxCandidates/bestRatio and elapsedMs")

        # 3. argus tune on a terminal: a bar rewritten in place.
        pid, fd = pty.fork()
        if pid == 0:
            try:  # the child: never back into the test (it would kill the cluster)
                fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))
                os.execv(tune_argv(a, c, 3)[0], tune_argv(a, c, 3, "32x32x64"))
            finally:
                os._exit(127)
        data = b""
        deadline = time.time() + 120
        while time.time() < deadline:
            r, _, _ = select.select([fd], [], [], 1)
            if not r:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        _, status = os.waitpid(pid, 0)
        text = data.decode(errors="replace")
        check(os.WEXITSTATUS(status) == 0, "argus tune on a pty succeeded")
        bars = [s for s in text.split("\r\x1b[K") if " cand: " in s]
        check(len(bars) >= 2, "the bar was redrawn %d times" % len(bars))
        check("progress job=" not in text, "no plain progress lines on a terminal")
        final = bars[-1].split("\n")[0]
        check(re.search(r"SUCCEEDED \[#+\] 3/3 cand: \d+ verified, \d+ rejected \| best \d+\.\d+x \| "
                        r"\d+:\d\d, left 0 cand / 0:00", final) is not None,
              "the last bar: " + final.strip())
    return run_checks(Cluster(a.bin), body)


if __name__ == "__main__":
    sys.exit(main())
