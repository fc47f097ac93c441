"""The ray engine: KubeRay RayJobs that run Ray Train (:mod:`.dialect`)."""
