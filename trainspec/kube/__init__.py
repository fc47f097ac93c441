"""The cluster layer: one Kubernetes client for ``trainspec submit/status/list/logs/cancel`` and the
KFP launcher (extra ``trainspec[kube]``).

* :mod:`~trainspec.kube.client`: the connected client (needs the ``kubernetes`` package);
* :mod:`~trainspec.kube.retry`: capped exponential backoff for transient API errors;
* :mod:`~trainspec.kube.resources`: REST paths of the kinds trainspec manages;
* :mod:`~trainspec.kube.state`: a TrainJob's phase, queueing and pods, from plain dicts;
  :mod:`~trainspec.kube.kueue_state`: what Kueue says of its Workload (why it waits, evictions,
  requeues, preemption);
* :mod:`~trainspec.kube.submit_plan` and :mod:`~trainspec.kube.submit`: what submit applies for a
  job, in which order, and applying it;
* :mod:`~trainspec.kube.follow`: following the newest pod per index's log.

Nothing here is imported by validate or compile; only ``client`` and ``follow`` need the
``kubernetes`` package.
"""
