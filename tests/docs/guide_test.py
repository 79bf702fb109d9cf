#!/usr/bin/env python3
"""Runs the commands of docs/getting-started.md as a newcomer would type them.

Every shell command in the guide's indented blocks is run, in order, from a
scratch directory that links `build/`, `examples/` and `kb/` to the real ones,
so the commands run verbatim: `j-…` becomes the job id printed last, the
service of section 7 gets free ports instead of 7070/8080 (other tests run
beside this one), its server and worker run in the background, and
`xdg-open URL` becomes an HTTP GET of the URL. Not run here, each printed as
such: `scripts/run` and `scripts/test` (CI runs scripts/test; scripts/run is
install + build + the tune command the guide prints beside it, which is run)
and commands marked "on a GPU host". The guide's Python block is compiled
(running it needs a GPU); `--cpp` compiles its C++ block against the exported
header and cuda.h (exit 77, a visible ctest skip, where cuda.h is missing).
"""
import argparse
import os
import py_compile
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
GUIDE = os.path.join(ROOT, "docs", "getting-started.md")
CUDA_INCLUDE = "/usr/local/cuda/include"


def guide_blocks(text):
    """(kind, body) for each fenced block (kind = its language) and each indented block ("sh")."""
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^```(\w*)", lines[i])
        if m:
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            blocks.append((m.group(1), "\n".join(lines[i + 1:j])))
            i = j + 1
        elif lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and lines[j].startswith("    "):
                j += 1
            blocks.append(("sh", "\n".join(l[4:] for l in lines[i:j])))
            i = j
        else:
            i += 1
    return blocks


def guide_commands(text):
    cmds = []
    for kind, body in guide_blocks(text):
        if kind == "sh":
            cmds += [l.strip() for l in body.split("\n")
                     if re.match(r"^(build/bin/|scripts/|export |xdg-open )", l.strip())]
    return cmds


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what)


class Guide:
    def __init__(self, build_dir, work):
        self.work, self.env, self.job, self.procs = work, dict(os.environ), None, []
        self.env["ARGUS_HOME"] = os.path.join(work, "home")
        self.env.pop("ARGUS_SERVER", None)
        for name, target in (("build", build_dir), ("examples", os.path.join(ROOT, "examples")),
                             ("kb", os.path.join(ROOT, "kb"))):
            os.symlink(target, os.path.join(work, name))
        self.ports = {"7070": str(free_port()), "8080": str(free_port())}

    def localize(self, cmd):
        for old, new in self.ports.items():
            cmd = cmd.replace("127.0.0.1:" + old, "127.0.0.1:" + new)
        if "j-…" in cmd:
            check(self.job, "a job id was printed before `%s`" % cmd)
            cmd = cmd.replace("j-…", self.job)
        return re.sub(r"\s+#.*$", "", cmd)

    def run(self, raw):
        if raw.startswith(("scripts/run", "scripts/test")):
            print("not run here: %s (CI runs scripts/test; scripts/run = install + build + the tune below)" % raw)
            return
        if "on a GPU host" in raw:
            print("not run here: %s (needs a GPU)" % raw)
            return
        cmd = self.localize(raw)
        if cmd.startswith("export "):
            name, _, value = cmd[len("export "):].partition("=")
            self.env[name] = value
            print("ok: %s" % cmd)
            return
        if cmd.startswith("xdg-open "):
            url = cmd.split()[1]
            with urllib.request.urlopen(url, timeout=10) as r:
                check(r.status == 200 and b"<html" in r.read(2000).lower(), "%s serves the dashboard" % url)
            return
        argv = shlex.split(cmd)
        if os.path.basename(argv[0]) in ("argus-server", "argus-worker"):
            self.background(argv)
            return
        t0 = time.time()
        r = subprocess.run(argv, cwd=self.work, env=self.env, capture_output=True, text=True, timeout=600)
        out = r.stdout + r.stderr
        ids = re.findall(r"\bj-[0-9a-f]{8,}\b", out)
        if ids and argv[1] in ("tune", "probe", "submit"):
            self.job = ids[0]
        check(r.returncode == 0, "`%s` exits 0 (%.1f s)%s" % (cmd, time.time() - t0,
                                                               "" if r.returncode == 0 else ":\n" + out[-3000:]))

    def background(self, argv):
        log = os.path.join(self.work, os.path.basename(argv[0]) + ".log")
        p = subprocess.Popen(argv, cwd=self.work, env=self.env, stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.procs.append(p)
        want = "http on" if "--http" in argv else ("listening on" if "argus-server" in argv[0] else "registered")
        deadline = time.time() + 30
        while time.time() < deadline and p.poll() is None:
            with open(log, errors="replace") as f:
                if want in f.read():
                    break
            time.sleep(0.1)
        with open(log, errors="replace") as f:
            text = f.read()
        check(p.poll() is None and want in text, "`%s` is up (%s)%s" % (" ".join(argv), want,
                                                                        "" if want in text else ":\n" + text[-2000:]))

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()


def run_commands(build_dir):
    text = open(GUIDE).read()
    cmds = guide_commands(text)
    check(len(cmds) >= 15, "the guide has its commands (%d)" % len(cmds))
    for kind, body in guide_blocks(text):
        if kind == "python":
            path = os.path.join(tempfile.mkdtemp(), "guide_block.py")
            open(path, "w").write(body)
            py_compile.compile(path, doraise=True)
            print("ok: the guide's Python block compiles (running it needs a GPU)")
    with tempfile.TemporaryDirectory(prefix="argus-guide-") as work:
        g = Guide(build_dir, work)
        try:
            for c in cmds:
                g.run(c)
        finally:
            g.close()
    print("PASS")


def compile_cpp(build_dir):
    if not os.path.exists(os.path.join(CUDA_INCLUDE, "cuda.h")):
        print("SKIPPED: no %s/cuda.h to compile the guide's C++ block against" % CUDA_INCLUDE)
        return 77
    text = open(GUIDE).read()
    cpp = [body for kind, body in guide_blocks(text) if kind == "cpp"]
    check(len(cpp) == 1, "the guide has one C++ block")
    with tempfile.TemporaryDirectory(prefix="argus-guide-cpp-") as work:
        g = Guide(build_dir, work)
        export = next(c for c in guide_commands(text) if " export " in c)
        g.run("build/bin/argus tune gemm --shape 128x128x64 --dtype bf16 --target interp --max_candidates 2")
        g.run(export)
        open(os.path.join(work, "main.cc"), "w").write(cpp[0])
        first = cpp[0].split("\n")[0]
        check(first.startswith("// main.cc: g++"), "the block says how to build it")
        argv = shlex.split(first[len("// main.cc: "):]) + ["-fsyntax-only"]
        argv = [a for a in argv if a != "-lcuda"]
        r = subprocess.run(argv, cwd=work, capture_output=True, text=True)
        check(r.returncode == 0, "`%s` compiles the guide's C++ against the export%s"
              % (" ".join(argv), "" if r.returncode == 0 else ":\n" + r.stderr[-3000:]))
    print("PASS")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--cpp", action="store_true")
    a = ap.parse_args()
    try:
        return compile_cpp(a.build) if a.cpp else run_commands(a.build) or 0
    except AssertionError as e:
        print("FAILED:", e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
