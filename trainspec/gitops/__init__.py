"""What trainspec hands GitOps controllers (Argo CD, Flux) besides the compiled manifests.

:mod:`trainspec.gitops.argocd` renders Argo CD health checks for the job kinds as an ``argocd-cm``
snippet (``trainspec gitops argocd-health``), from Lua scripts shipped as package data in
``trainspec/gitops/health/``. This module imports nothing, so importing one of the package's
modules costs only that module.
"""
