"""``trainspec run --local``: run a compiled job on this machine the way the cluster would.

The job is compiled with the same pipeline as every other command; then, instead of applying the
TrainJob, trainspec plays the part of Kubeflow Trainer's controller and of the kubelet:

* :mod:`trainspec.run.job` reads the lowered TrainJob and its runtime into a :class:`LocalJob`
  (the env each container gets, in the controller's upsert order, the command, the volumes);
* :mod:`trainspec.run.environment` adds what the controller's framework plugin injects
  (``PET_*``, ``JAX_*``, ``OMPI_MCA_*``) and maps volume paths onto a local work directory;
* :mod:`trainspec.run.secrets` resolves ``secretEnv`` from the local environment or an env file;
* :mod:`trainspec.run.gpus` slices this machine's GPUs over the nodes;
* :mod:`trainspec.run.processes` runs one process group per node, prefixes their output and
  stops them all on Ctrl-C; each under a :mod:`trainspec.run.keeper`, which ends what the node
  started when the node ends or trainspec dies (SIGKILL included): no orphans;
* :mod:`trainspec.run.lock` takes the work directory for the run's id, one run of an id at a time;
* :mod:`trainspec.run.local` puts it together: the sharding stage first, then the nodes.

Nothing here is imported by ``validate`` or ``compile``.
"""
