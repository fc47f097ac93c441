"""The admission webhooks of the operators, re-implemented: Kubeflow Trainer, JobSet and the Training
Operator."""
