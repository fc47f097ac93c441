"""Kueue pre-flight for ``trainspec check``: can this job ever be admitted by the queues in Git?

* :mod:`.cluster` reads Kubernetes objects from YAML with their positions, and the Kueue
  objects among them (ClusterQueue, LocalQueue, ResourceFlavor, WorkloadPriorityClass, Cohort,
  Topology, Namespace; ``v1beta2`` and ``v1beta1``);
* :mod:`.podsets` computes the PodSets Kueue would build from a TrainJob and its runtime;
* :mod:`.quota` is the quota math: flavor candidates, flavor order, cohort capacity;
* :mod:`.preflight` runs the checklist and reports TS51x diagnostics;
* :mod:`.cache` is the optional on-disk cache that keeps ``trainspec check`` start-up cheap
  (converted CRD schemas and CEL parse trees).

Everything here works on plain manifest dicts, so compiled specs and manifests read from
files are checked the same way. Nothing is imported eagerly.
"""

from __future__ import annotations
