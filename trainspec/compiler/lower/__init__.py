"""The *lower* pass: plans and runtimes become typed Kubernetes objects (``trainspec.k8s``)."""
