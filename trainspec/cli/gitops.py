"""``trainspec gitops argocd-cm|argocd-health``: what a GitOps controller needs besides the manifests.

    trainspec gitops argocd-cm | kubectl apply --server-side -f -   # health checks + Kueue's fields (argocd-cm)

The ConfigMap holds one Lua health check per job kind (TrainJob, RayJob, PyTorchJob, JAXJob, MPIJob);
docs/gitops-health.md says what each reports. The renderer is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import sys

WHATS = {
    "argocd-cm": "the argocd-cm ConfigMap trainspec's job kinds need: the health checks, and the fields Kueue "
    "writes as ignoreDifferences (docs/gitops.md)",
    "argocd-health": "an argocd-cm ConfigMap with Argo CD health checks for TrainJob, RayJob, PyTorchJob, "
    "JAXJob and MPIJob",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "what",
        choices=tuple(WHATS),
        help="; ".join(f"{name}: {text}" for name, text in WHATS.items()),
    )


def run(args: argparse.Namespace) -> int:
    from trainspec.gitops.argocd import argocd_cm, health_customizations

    sys.stdout.write(argocd_cm() if args.what == "argocd-cm" else health_customizations())
    return 0
