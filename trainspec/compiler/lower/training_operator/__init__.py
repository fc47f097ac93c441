"""The training-operator engine: PyTorchJob, JAXJob and MPIJob (:mod:`.dialect`)."""
