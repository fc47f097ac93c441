"""Kueue pre-flight for ``trainspec check``: can this job ever be admitted by the queues in Git?

* :mod:`.located` reads Kubernetes objects from YAML with the position of every field;
* :mod:`.cluster_files` picks out the Kueue objects among them (ClusterQueue, LocalQueue,
  ResourceFlavor, WorkloadPriorityClass, Cohort, Topology, Namespace; ``v1beta2``/``v1beta1``);
* :mod:`.podsets` computes the PodSets Kueue would build from a TrainJob and its runtime;
* :mod:`.quota` is the quota math: flavor candidates, cohort capacity, borrowing levels;
* :mod:`.assigner` plays Kueue's flavor assigner on an idle ClusterQueue: flavor order,
  ``flavorFungibility`` and Kueue's retries decide which flavor each PodSet takes;
* :mod:`.fungibility` holds the Kueue-version rules of ``flavorFungibility`` and explains a
  job the assigner never places;
* :mod:`.preflight` runs the checklist and reports TS51x diagnostics;

Everything here works on plain manifest dicts, so compiled specs and manifests read from
files are checked the same way. Nothing is imported eagerly.
"""

from __future__ import annotations
