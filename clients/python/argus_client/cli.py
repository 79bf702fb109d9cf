"""`argus-client` / `python3 -m argus_client`: the client library from a shell.

Prints JSON on stdout and progress on stderr. Exit codes: 0 the job succeeded,
1 it failed or was cancelled, 2 usage, 4 not found, 5 any other error.
"""
import argparse
import dataclasses
import json
import sys

from argus_client.client import ArgusError, Client
from argus_client.stubs import StubsError


def _show(ev):
    extra = " tried %d, verified %d" % (ev.tried, ev.verified) if ev.tried else ""
    print("  %s: %d/%d tasks%s %s" % (ev.state, ev.tasks_done, ev.tasks_total, extra, ev.last), file=sys.stderr)


def _result_json(res):
    return {"id": res.job_id, "state": res.state, "error": res.error, "target": res.target,
            "kernel": res.kernel, "baseline": res.baseline, "speedup": res.speedup,
            "correctness_only": res.correctness_only, "result": res.raw}


def _shape(text):
    return dict((k, int(v)) for k, v in (p.split("=", 1) for p in text.split(",")))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="argus-client", description="Python client of the Argus job service")
    ap.add_argument("--server", help="HOST:PORT (default $ARGUS_SERVER)")
    ap.add_argument("--token_file", help="a client token (default $ARGUS_TOKEN)")
    ap.add_argument("--ca_file", help="CA certificate: TLS")
    sub = ap.add_subparsers(dest="verb", required=True)
    sub.add_parser("probe", help="run a probe job and print every worker's inventory")
    for verb in ("result", "watch", "cancel"):
        sub.add_parser(verb).add_argument("job")
    ls = sub.add_parser("list")
    ls.add_argument("--state")
    ls.add_argument("--limit", type=int, default=50)
    t = sub.add_parser("tune")
    t.add_argument("problem")
    t.add_argument("--shape", required=True, help="NAME=V,NAME=V")
    t.add_argument("--dtype", default="bf16")
    t.add_argument("--target", default="auto")
    t.add_argument("--max_candidates", type=int, default=0)
    t.add_argument("--option", action="append", default=[], help="NAME=V")
    a = ap.parse_args(argv)
    try:
        shape = _shape(a.shape) if a.verb == "tune" else None
        opts = dict(o.split("=", 1) for o in getattr(a, "option", []))
    except ValueError:
        ap.error("--shape and --option take NAME=V")
    try:
        with Client(a.server, token_file=a.token_file, ca_file=a.ca_file) as c:
            if a.verb == "probe":
                res = c.probe()
            elif a.verb == "tune":
                res = c.tune(a.problem, shape, dtype=a.dtype, target=a.target, options=opts,
                             max_candidates=a.max_candidates, on_progress=_show)
            elif a.verb == "watch":
                for ev in c.watch(a.job):
                    _show(ev)
                res = c.result(a.job)
            elif a.verb == "result":
                res = c.result(a.job)
            elif a.verb == "cancel":
                print(json.dumps({"id": a.job, "state": c.cancel(a.job)}))
                return 0
            else:
                print(json.dumps([dataclasses.asdict(j) for j in c.list(a.state, a.limit)], indent=2))
                return 0
    except (ArgusError, StubsError) as e:
        print("argus-client:", e, file=sys.stderr)
        return 4 if getattr(e, "code", "") == "NOT_FOUND" else 5
    print(json.dumps(_result_json(res), indent=2))
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
