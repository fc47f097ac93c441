"""The trainer engine: Kubeflow Trainer TrainJobs on (Cluster)TrainingRuntimes (:mod:`.dialect`)."""
