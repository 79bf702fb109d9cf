"""A client of the Argus job service (argus.v1.JobService over gRPC).

    from argus_client import Client
    c = Client("127.0.0.1:7070", token=os.environ.get("ARGUS_TOKEN"))
    res = c.tune("gemm", {"M": 4096, "N": 4096, "K": 4096}, dtype="bf16", target="sm_90a")
    print(res.state, res.speedup, res.baseline, res.kernel)

Every call raises ArgusError (with the gRPC status name in `code`) on failure.
A Client may be shared between threads: gRPC channels and stubs are thread-safe,
and the client keeps no other mutable state.
"""
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional

from argus_client import stubs

_DONE = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")


class ArgusError(Exception):
    """A failed call: `code` is the gRPC status name (NOT_FOUND, INVALID_ARGUMENT, ...)."""

    def __init__(self, what, code="UNKNOWN", details=""):
        super().__init__("%s: %s: %s" % (what, code, details) if details else "%s: %s" % (what, code))
        self.code = code
        self.details = details


@dataclass
class Progress:
    """One event of a watched job."""
    job_id: str
    state: str                 # JOB_STATE_QUEUED, ..._RUNNING, ..._SUCCEEDED, ...
    message: str
    elapsed_s: float
    tasks_done: int
    tasks_total: int
    tried: int = 0             # tune jobs: candidates finished (gate + run)
    verified: int = 0
    rejected: int = 0
    best_speedup: float = 0.0  # 0 when none yet, or on the interpreter (no speed claim)
    last: str = ""

    @property
    def done(self):
        return self.state in _DONE


@dataclass
class Result:
    """What a job produced (`raw` is the job's result JSON as a dict)."""
    job_id: str
    state: str
    error: str
    target: str
    raw: dict = field(default_factory=dict)

    @property
    def ok(self):
        return self.state == "JOB_STATE_SUCCEEDED"

    @property
    def best(self) -> Optional[dict]:
        return self.raw.get("best")

    @property
    def kernel(self) -> Optional[str]:
        return (self.best or {}).get("kernel")

    @property
    def baseline(self) -> Optional[str]:
        return self.raw.get("baseline_name")

    @property
    def correctness_only(self) -> bool:
        """True for jobs run on the interpreter: they prove correctness, not speed."""
        return self.target == "interp"

    @property
    def speedup(self) -> Optional[float]:
        """Baseline time / ours on a GPU; None on the interpreter or without a best kernel."""
        if self.correctness_only or not self.best:
            return None
        s = self.best.get("speedup", self.best.get("ratio"))
        return float(s) if s is not None else None


@dataclass
class JobSummary:
    job_id: str
    kind: str
    state: str
    family: str
    shape: Dict[str, int]
    dtype: str
    target: str
    created_unix_ms: int


def _parse_shape(shape):
    """{"M": 64, ...} or "M=64,N=64,K=64" -> dict of ints."""
    if isinstance(shape, dict):
        return {str(k): int(v) for k, v in shape.items()}
    out = {}
    for part in str(shape).split(","):
        name, eq, value = part.partition("=")
        if not eq or not name.strip():
            raise ArgusError("shape %r" % shape, "INVALID_ARGUMENT", "give a dict or NAME=V,NAME=V")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise ArgusError("shape %r" % shape, "INVALID_ARGUMENT", "%s is not an integer" % value) from None
    return out


class Client:
    def __init__(self, address=None, token=None, *, token_file=None, ca_file=None, cert_file=None,
                 key_file=None, timeout=30.0):
        """address: HOST:PORT (default $ARGUS_SERVER). token or token_file (default $ARGUS_TOKEN):
        sent as `authorization: Bearer TOKEN`. ca_file turns on TLS (cert_file + key_file: mTLS)."""
        import grpc
        self._grpc = grpc
        self.pb, pb_grpc = stubs.load()
        self.address = address or os.environ.get("ARGUS_SERVER", "")
        if not self.address:
            raise ArgusError("Client", "INVALID_ARGUMENT", "no server address (argument or $ARGUS_SERVER)")
        if token_file:
            with open(token_file) as f:
                token = f.read().strip()
        token = token if token is not None else os.environ.get("ARGUS_TOKEN") or None
        self._metadata = (("authorization", "Bearer " + token),) if token else ()
        self.timeout = timeout
        if ca_file:
            def read(p):
                if not p:
                    return None
                with open(p, "rb") as f:
                    return f.read()
            creds = grpc.ssl_channel_credentials(read(ca_file), read(key_file), read(cert_file))
            self._channel = grpc.secure_channel(self.address, creds)
        else:
            self._channel = grpc.insecure_channel(self.address)
        self._stub = pb_grpc.JobServiceStub(self._channel)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- calls ---------------------------------------------------------------------------------

    def _call(self, what, method, request, timeout=None):
        try:
            return method(request, timeout=timeout or self.timeout, metadata=self._metadata)
        except self._grpc.RpcError as e:
            raise ArgusError(what, e.code().name, e.details()) from None

    def _state(self, value):
        return self.pb.JobState.Name(value)

    def submit_tune(self, problem, shape, *, dtype="bf16", target="auto", options=None, constants=None,
                    max_candidates=0, deadline_s=0, policy="builtin") -> str:
        """Submits a tune job for a catalog problem and returns its id (does not wait)."""
        spec = self.pb.JobSpec(kind=self.pb.JOB_KIND_TUNE, target=target, max_candidates=max_candidates,
                               policy=policy, deadline_ms=int(deadline_s * 1000))
        spec.problem.family = problem
        spec.problem.dtype = dtype
        spec.problem.shape.update(_parse_shape(shape))
        spec.problem.options.update({str(k): str(v) for k, v in (options or {}).items()})
        spec.constants.update({str(k): int(v) for k, v in (constants or {}).items()})
        return self._call("submit %s" % problem, self._stub.SubmitJob, self.pb.SubmitJobRequest(spec=spec)).job.id

    def tune(self, problem, shape, *, wait=True, on_progress=None, **kw) -> Result:
        """Tunes a kernel for `problem` at `shape`; with wait (default) follows the job to its end
        (on_progress(Progress) at every event) and returns its Result."""
        job_id = self.submit_tune(problem, shape, **kw)
        if not wait:
            return self.result(job_id)
        for ev in self.watch(job_id):
            if on_progress:
                on_progress(ev)
        return self.result(job_id)

    def batch(self, problems: List[dict], *, on_progress=None) -> List[Result]:
        """Submits every problem (dicts of submit_tune's arguments: problem, shape, dtype, ...),
        then follows them all; returns their Results in the same order."""
        ids = []
        for p in problems:
            p = dict(p)
            ids.append(self.submit_tune(p.pop("problem"), p.pop("shape"), **p))
        for job_id in ids:
            for ev in self.watch(job_id):
                if on_progress:
                    on_progress(ev)
        return [self.result(i) for i in ids]

    def submit_probe(self, workers=0) -> str:
        """Submits a probe job (each worker reports its inventory; 0 = every connected worker)."""
        spec = self.pb.JobSpec(kind=self.pb.JOB_KIND_PROBE, probe_workers=workers)
        return self._call("probe", self._stub.SubmitJob, self.pb.SubmitJobRequest(spec=spec)).job.id

    def probe(self, workers=0) -> Result:
        """Runs a probe job and returns its Result once every worker answered."""
        job_id = self.submit_probe(workers)
        for _ in self.watch(job_id):
            pass
        return self.result(job_id)

    def result(self, job_id) -> Result:
        job = self._call("job " + job_id, self._stub.GetJob, self.pb.GetJobRequest(id=job_id))
        raw = json.loads(job.result_json) if job.result_json else {}
        target = raw.get("target") or job.spec.target
        return Result(job.id, self._state(job.state), job.error, target, raw)

    def cancel(self, job_id) -> str:
        """Cancels a job; returns its state afterwards."""
        job = self._call("cancel " + job_id, self._stub.CancelJob, self.pb.CancelJobRequest(id=job_id))
        return self._state(job.state)

    def list(self, state=None, limit=50) -> List[JobSummary]:
        """The newest jobs first (state: e.g. "JOB_STATE_RUNNING" or "running"; None = any).
        Follows the server's pages when it paginates."""
        req = self.pb.ListJobsRequest(limit=limit)
        if state:
            name = state.upper() if state.upper().startswith("JOB_STATE_") else "JOB_STATE_" + state.upper()
            try:
                req.state = self.pb.JobState.Value(name)
            except ValueError:
                raise ArgusError("list", "INVALID_ARGUMENT", "unknown state %r" % state) from None
        out = []
        while True:
            resp = self._call("list", self._stub.ListJobs, req)
            for j in resp.jobs:
                p = j.spec.problem
                out.append(JobSummary(j.id, self.pb.JobKind.Name(j.spec.kind), self._state(j.state), p.family,
                                      dict(p.shape), p.dtype, j.spec.target, j.created_unix_ms))
            token = getattr(resp, "next_page_token", "")
            if not token or (limit and len(out) >= limit):
                return out[:limit] if limit else out
            req.page_token = token

    def watch(self, job_id, reconnect_for=60.0) -> Iterator[Progress]:
        """Yields Progress at every change of the job until it ends; rides out a server restart
        (reconnects after UNAVAILABLE for up to reconnect_for seconds)."""
        give_up = None
        while True:
            try:
                stream = self._stub.WatchJob(self.pb.WatchJobRequest(id=job_id), metadata=self._metadata)
                for ev in stream:
                    give_up = None
                    p = self._progress(ev)
                    yield p
                    if p.done:
                        return
                if self.result(job_id).state in _DONE:
                    return
            except self._grpc.RpcError as e:
                if e.code() != self._grpc.StatusCode.UNAVAILABLE:
                    raise ArgusError("watch " + job_id, e.code().name, e.details()) from None
            give_up = give_up or time.time() + reconnect_for
            if time.time() > give_up:
                raise ArgusError("watch " + job_id, "UNAVAILABLE",
                                 "server %s unreachable for %.0f s" % (self.address, reconnect_for))
            time.sleep(0.2)

    def _progress(self, ev) -> Progress:
        p = Progress(ev.job_id, self._state(ev.state), ev.message, ev.elapsed_ms / 1000.0, ev.tasks_done,
                     ev.tasks_total)
        if ev.HasField("tune"):
            t = ev.tune
            p.tried, p.verified, p.rejected, p.last = t.tried, t.verified, t.rejected, t.last
            p.best_speedup = 0.0 if t.target == "interp" else t.best_ratio
        return p

    def artifacts(self, job_id, candidate_id="") -> List[dict]:
        """The compiled artifacts stored for a job's candidates: dicts of id, candidate_id, target,
        kind, bytes, metadata (parsed)."""
        resp = self._call("artifacts " + job_id, self._stub.ListArtifacts,
                          self.pb.ListArtifactsRequest(job_id=job_id, candidate_id=candidate_id))
        return [{"id": a.id, "candidate_id": a.candidate_id, "target": a.target, "kind": a.kind,
                 "bytes": a.bytes, "metadata": json.loads(a.metadata_json) if a.metadata_json else {}}
                for a in resp.artifacts]

    def export(self, job_id, out_dir, *, target=None, argus=None) -> List[str]:
        """Writes the job's best kernel, compiled, with its C++ (argus_kernel.h) and PyTorch
        (launch_torch.py) launchers into out_dir, by running `argus export` (the compiler lives
        in the argus binary: `argus` on PATH, $ARGUS_BIN, or the `argus` argument). Returns the
        files written."""
        exe = argus or os.environ.get("ARGUS_BIN") or shutil.which("argus")
        if not exe:
            raise ArgusError("export " + job_id, "FAILED_PRECONDITION",
                             "the argus binary is not on PATH (pass argus= or set $ARGUS_BIN)")
        argv = [exe, "export", job_id, "-o", out_dir, "--server", self.address]
        if target:
            argv += ["--target", target]
        env = dict(os.environ)
        if self._metadata:
            env["ARGUS_TOKEN"] = self._metadata[0][1][len("Bearer "):]
        r = subprocess.run(argv, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise ArgusError("export " + job_id, "FAILED_PRECONDITION" if r.returncode == 4 else "UNKNOWN",
                             (r.stderr or r.stdout).strip())
        return sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir))
