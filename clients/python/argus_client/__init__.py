"""Python client of the Argus job service: tune, batch, watch, result, export, list, cancel.

    from argus_client import Client
    with Client("127.0.0.1:7070") as c:
        res = c.tune("gemm", {"M": 64, "N": 64, "K": 64}, dtype="f32", target="interp")
        print(res.state, res.kernel, res.speedup)
"""
from argus_client.client import ArgusError, Client, JobSummary, Progress, Result  # noqa: F401
from argus_client.stubs import StubsError, generate_stubs  # noqa: F401

__all__ = ["ArgusError", "Client", "JobSummary", "Progress", "Result", "StubsError", "generate_stubs"]
