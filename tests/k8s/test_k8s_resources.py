"""Each top-level kind serialises to exactly the expected dict."""

from __future__ import annotations

from typing import Any

from k8s import samples
from trainspec.k8s import (
    ClusterTrainingRuntime,
    Container,
    JobSetSpec,
    JobSetTemplateSpec,
    JobSpec,
    JobTemplateSpec,
    MLPolicy,
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PodSpec,
    PodTemplateSpec,
    ReplicatedJob,
    ResourceRequirements,
    TorchMLPolicySource,
    TrainingRuntimeSpec,
    VolumeResourceRequirements,
    to_dict,
)

ANCESTOR = samples.ANCESTOR
HOST = "kubernetes.io/hostname"


def test_persistent_volume_claim() -> None:
    pvc = PersistentVolumeClaim(
        metadata=ObjectMeta(
            name="ckpt-llama",
            namespace="team-a",
            labels={"trainspec.dev/job": "llama"},
            owner_references=[
                OwnerReference(api_version="v1", kind="ConfigMap", name="owner", uid="1234", controller=True)
            ],
        ),
        spec=PersistentVolumeClaimSpec(
            access_modes=["ReadWriteMany"],
            resources=VolumeResourceRequirements(requests={"storage": "2Ti"}),
            storage_class_name="shared-rwx",
            volume_mode="Filesystem",
        ),
    )
    assert to_dict(pvc) == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "ckpt-llama",
            "namespace": "team-a",
            "labels": {"trainspec.dev/job": "llama"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "name": "owner",
                    "uid": "1234",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": "2Ti"}},
            "storageClassName": "shared-rwx",
            "volumeMode": "Filesystem",
        },
    }


def test_cluster_training_runtime_minimal_torch() -> None:
    runtime = ClusterTrainingRuntime(
        metadata=ObjectMeta(name="torch-cpu", labels={samples.FRAMEWORK: "torch"}),
        spec=TrainingRuntimeSpec(
            ml_policy=MLPolicy(num_nodes=1, torch=TorchMLPolicySource()),
            template=JobSetTemplateSpec(
                spec=JobSetSpec(
                    replicated_jobs=[
                        ReplicatedJob(
                            name="node",
                            template=JobTemplateSpec(
                                metadata=ObjectMeta(labels={ANCESTOR: "trainer"}),
                                spec=JobSpec(
                                    template=PodTemplateSpec(
                                        spec=PodSpec(
                                            containers=[
                                                Container(
                                                    name="node",
                                                    image="python:3.12",
                                                    command=["torchrun", "train.py"],
                                                    resources=ResourceRequirements(
                                                        requests={"memory": "4Gi", "cpu": 2}
                                                    ),
                                                    volume_mounts=[],
                                                )
                                            ]
                                        )
                                    )
                                ),
                            ),
                        )
                    ]
                )
            ),
        ),
    )
    assert to_dict(runtime) == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "torch-cpu", "labels": {"trainer.kubeflow.org/framework": "torch"}},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": {ANCESTOR: "trainer"}},
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "containers": [
                                                {
                                                    "name": "node",
                                                    "image": "python:3.12",
                                                    "command": ["torchrun", "train.py"],
                                                    "resources": {"requests": {"cpu": 2, "memory": "4Gi"}},
                                                    "volumeMounts": [],
                                                }
                                            ]
                                        }
                                    }
                                },
                            },
                        }
                    ]
                }
            },
        },
    }


def test_training_runtime_mpi() -> None:
    def job(labels: dict[str, str] | None, command: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "node",
                                "image": "registry.example.com/train/mpi:5",
                                "command": command,
                                "resources": {"limits": {"nvidia.com/gpu": 8}},
                                "securityContext": {
                                    "capabilities": {"add": ["SYS_CHROOT"]},
                                    "runAsUser": 1000,
                                },
                            }
                        ],
                        "schedulerName": "scheduler-plugins-scheduler",
                    }
                }
            }
        }
        if labels:
            out = {"metadata": {"labels": labels}, **out}
        return out

    assert to_dict(samples.mpi_runtime()) == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {
            "name": "trainspec-mpi",
            "namespace": "team-a",
            "labels": {"trainer.kubeflow.org/framework": "deepspeed"},
        },
        "spec": {
            "mlPolicy": {
                "numNodes": 2,
                "mpi": {
                    "numProcPerNode": 8,
                    "mpiImplementation": "OpenMPI",
                    "sshAuthMountPath": "/home/mpiuser/.ssh",
                    "runLauncherAsNode": False,
                },
            },
            "podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": 120}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {"name": "node", "template": job(None, ["/usr/sbin/sshd", "-De"])},
                        {
                            "name": "launcher",
                            "dependsOn": [{"name": "node", "status": "Ready"}],
                            "template": job({ANCESTOR: "trainer"}, ["mpirun", "python", "/app/train.py"]),
                        },
                    ],
                    "successPolicy": {"operator": "Any", "targetReplicatedJobs": ["launcher"]},
                }
            },
        },
    }


def test_train_job_with_the_full_patch_chain() -> None:
    expected_pod_spec = {
        "volumes": [{"name": "checkpoints", "persistentVolumeClaim": {"claimName": "ckpt-llama"}}],
        "initContainers": [{"name": "preflight", "env": [{"name": "PREFLIGHT_STRICT", "value": "1"}]}],
        "containers": [
            {
                "name": "node",
                "volumeMounts": [{"name": "checkpoints", "mountPath": "/checkpoints"}],
                "securityContext": {"readOnlyRootFilesystem": True},
            }
        ],
        "nodeSelector": {"topology.kubernetes.io/zone": "zone-a"},
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "training", "effect": "NoSchedule"}],
        "schedulingGates": [{"name": "example.com/quota-check"}],
        "serviceAccountName": "llama-trainer",
        "imagePullSecrets": [{"name": "registry-credentials"}],
        "securityContext": {"fsGroup": 2000},
        "terminationGracePeriodSeconds": 300,
    }
    assert to_dict(samples.patched_trainjob(7)) == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {
            "name": "llama-ft-7",
            "namespace": "team-a",
            "labels": {
                "kueue.x-k8s.io/priority-class": "high",
                "kueue.x-k8s.io/queue-name": "gpu-queue",
            },
            "annotations": {"trainspec.dev/source": "specs/llama.yaml"},
        },
        "spec": {
            "runtimeRef": {
                "name": "trainspec-torch-h100",
                "apiGroup": "trainer.kubeflow.org",
                "kind": "ClusterTrainingRuntime",
            },
            "initializer": {
                "dataset": {
                    "storageUri": "s3://datasets/llama/v3",
                    "env": [{"name": "REGION", "value": "eu-west-1"}],
                    "secretRef": {"name": "s3-credentials"},
                },
                "model": {
                    "storageUri": "hf://meta-llama/Llama-3.2-1B",
                    "secretRef": {"name": "hf-token"},
                },
            },
            "trainer": {
                "image": "registry.example.com/train/pytorch:2.13",
                "command": ["torchrun"],
                "args": ["/app/train.py", "--lr=3e-4", "--seed=7"],
                "env": [
                    {"name": "NCCL_DEBUG", "value": "WARN"},
                    {
                        "name": "HF_TOKEN",
                        "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}},
                    },
                ],
                "numNodes": 4,
                "resourcesPerNode": {
                    "requests": {"cpu": 96, "memory": "1600Gi", "nvidia.com/gpu": 8},
                    "limits": {"memory": "1600Gi", "nvidia.com/gpu": 8},
                },
                "numProcPerNode": 8,
            },
            "runtimePatches": [
                {
                    "manager": "trainspec.dev/compiler",
                    "trainingRuntimeSpec": {
                        "template": {
                            "metadata": {"labels": {"trainspec.dev/job": "llama-ft-7"}},
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": "node",
                                        "template": {
                                            "metadata": {"annotations": {"trainspec.dev/spec-hash": "0f3a9c"}},
                                            "spec": {
                                                "template": {
                                                    "metadata": {
                                                        "labels": {"trainspec.dev/role": "trainer"},
                                                        "annotations": {samples.TOPOLOGY: HOST},
                                                    },
                                                    "spec": expected_pod_spec,
                                                }
                                            },
                                        },
                                    }
                                ]
                            },
                        }
                    },
                }
            ],
            "suspend": True,
            "activeDeadlineSeconds": 172800,
            "managedBy": "trainer.kubeflow.org/trainjob-controller",
        },
    }


def test_torch_runtime_key_points() -> None:
    out = to_dict(samples.torch_runtime())
    assert out["spec"]["mlPolicy"] == {"numNodes": 1, "torch": {}}
    jobs = out["spec"]["template"]["spec"]["replicatedJobs"]
    assert [j["name"] for j in jobs] == ["dataset-initializer", "node"]
    # The ancestor label sits on the Job template, not on the pod template.
    assert jobs[0]["template"]["metadata"] == {"labels": {ANCESTOR: "dataset-initializer"}}
    assert "metadata" not in jobs[0]["template"]["spec"]["template"]
    assert jobs[1]["dependsOn"] == [{"name": "dataset-initializer", "status": "Complete"}]
    node = jobs[1]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert list(node) == [
        "name",
        "image",
        "command",
        "env",
        "envFrom",
        "ports",
        "resources",
        "volumeMounts",
        "readinessProbe",
        "securityContext",
    ]
    assert node["readinessProbe"] == {"tcpSocket": {"port": 29500}, "initialDelaySeconds": 5}
    assert node["resources"]["limits"] == {"memory": "1600Gi", "nvidia.com/gpu": 8}
    assert out["spec"]["template"]["spec"]["network"] == {
        "enableDNSHostnames": True,
        "publishNotReadyAddresses": True,
    }
    assert out["spec"]["template"]["spec"]["volumeClaimPolicies"] == [
        {
            "templates": [
                {
                    "metadata": {"name": "initializer"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "500Gi"}},
                        "storageClassName": "fast-rwo",
                    },
                }
            ],
            "retentionPolicy": {"whenDeleted": "Delete"},
        }
    ]
    pod = jobs[1]["template"]["spec"]["template"]["spec"]
    assert pod["volumes"][0] == {
        "name": "dshm",
        "emptyDir": {"medium": "Memory", "sizeLimit": "256Gi"},
    }
    assert pod["volumes"][1] == {
        "name": "hf-token",
        "secret": {"secretName": "hf-token", "defaultMode": 0o440},
    }
