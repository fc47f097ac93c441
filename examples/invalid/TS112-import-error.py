# expect: TS112 9:1
"""A Python spec module that fails to import: the error points at the failing line."""

from trainspec import TrainingJob

job = TrainingJob(name="py-broken", runtime="trainspec-torch", queue="research")

settings = {"nodes": 2}
nodes = settings["node"]
