"""trainspec's Python client for the cluster: ``trainspec submit/status/list/logs/cancel`` as calls. ::

    import trainspec

    client = trainspec.Client(namespace="ml-dev")          # the current kubeconfig context
    submitted = client.submit("specs/ddp-cpu.yaml")          # compiles, then server-side applies
    state = client.wait("ddp-cpu", "Running", timeout=600)   # the newest run of job ddp-cpu
    for line in client.logs("ddp-cpu", node=0, follow=True):
        print(line.rank, line.text)
    print(client.wait("ddp-cpu").phase)                      # Complete or Failed

Needs the ``kube`` extra (``pip install 'trainspec[kube]'``) to connect; importing this package
does not import the ``kubernetes`` client. Reference, and how it sits beside the Kubeflow SDK's
``TrainerClient``: docs/client.md.
"""

from __future__ import annotations

from trainspec.client.errors import ClusterError, JobEnded, WaitTimeout
from trainspec.client.results import (
    Admission,
    Applied,
    Cancelled,
    Event,
    JobState,
    LogLine,
    Pods,
    Progress,
    RuntimeInfo,
    SubmitResult,
)
from trainspec.client.trainjob_client import Client

__all__ = [
    "Admission",
    "Applied",
    "Cancelled",
    "Client",
    "ClusterError",
    "Event",
    "JobEnded",
    "JobState",
    "LogLine",
    "Pods",
    "Progress",
    "RuntimeInfo",
    "SubmitResult",
    "WaitTimeout",
]
