"""GPU node labels -> what one GPU is: the accelerator of a runtime that names its GPUs by node label.

A runtime that selects its nodes by a well-known GPU label (``scheduling.nodeSelector``) already
says which GPU its jobs get; the parallelism planner then needs no ``accelerator`` block to know
one GPU's memory and NVLink bandwidth. :func:`runtime_accelerator` is the one place the compiler and
``explain`` ask for "the accelerator of this runtime": the written ``accelerator`` when there is
one (it always wins), else the one its node selector names, else None.

Labels read, most specific first (the keys are in :mod:`trainspec.k8s.wellknown`):

* ``nvidia.com/gpu.product``, set by NVIDIA GPU feature discovery (part of the GPU Operator): the
  product name NVML reports with spaces as ``-``. A MIG slice (``...-MIG-1g.10gb``) or a
  time-shared GPU (``...-SHARED``) is not a whole GPU and is not matched.
* ``cloud.google.com/gke-accelerator``, set by GKE on GPU node pools (its accelerator type names).
* ``karpenter.k8s.aws/instance-gpu-name`` with ``karpenter.k8s.aws/instance-gpu-memory`` (MiB per
  GPU), set by Karpenter on AWS from the EC2 instance type. A name that comes in two memory sizes
  (a100, v100) is only matched with the memory label.

AKS documents no label naming the GPU model (its GPU node pools carry the VM size in
``node.kubernetes.io/instance-type``), so nothing is inferred there. Only a runtime's
``nodeSelector`` is read: trainspec's runtimes have no node affinity of their own.

Memory is the data sheet's figure in GiB (``80Gi`` for an 80 GB part), as the runtime examples
write it; NVML reports a little less (81559 MiB on an H100 80GB HBM3), which the planner's 10%
headroom covers. NVLink is the data sheet's bandwidth per GPU, both directions together, as
``accelerator.nvlinkBandwidth`` takes it; PCIe cards have none (a bridge, where fitted, is not
assumed).
"""

from __future__ import annotations

from collections.abc import Mapping

from trainspec.dsl.framework.quantity import Quantity
from trainspec.dsl.record import Record
from trainspec.dsl.spec.models import Accelerator, RuntimeSpec
from trainspec.k8s.wellknown import (
    GKE_ACCELERATOR_LABEL,
    GPU_PRODUCT_LABEL,
    KARPENTER_GPU_MEMORY_LABEL,
    KARPENTER_GPU_NAME_LABEL,
)


class Gpu(Record):
    """One GPU model as a data sheet gives it: name, memory (a quantity) and NVLink bandwidth."""

    name: str
    memory: str | None
    nvlink: str | None = None


# NVIDIA data sheets: H100 Tensor Core GPU (SXM5 80 GB HBM3, NVLink 900 GB/s; PCIe 80 GB; NVL
# 94 GB with a 600 GB/s bridge pair), H200 (141 GB HBM3e, NVLink 900 GB/s), B200 in DGX B200
# (180 GB HBM3e, fifth-generation NVLink 1.8 TB/s), A100 (SXM4 40/80 GB, NVLink 600 GB/s; PCIe),
# V100 SXM2 (16/32 GB, NVLink 300 GB/s), L4 (24 GB), L40S (48 GB), A10G (24 GB, AWS G5), T4 (16 GB).
H100_SXM = Gpu("H100", "80Gi", "900GB/s")
H100_PCIE = Gpu("H100", "80Gi")
H100_NVL = Gpu("H100", "94Gi", "600GB/s")
H200 = Gpu("H200", "141Gi", "900GB/s")
B200 = Gpu("B200", "180Gi", "1800GB/s")
A100_80 = Gpu("A100", "80Gi", "600GB/s")
A100_40 = Gpu("A100", "40Gi", "600GB/s")
A100_80_PCIE = Gpu("A100", "80Gi")
A100_40_PCIE = Gpu("A100", "40Gi")
V100_16 = Gpu("V100", "16Gi", "300GB/s")
V100_32 = Gpu("V100", "32Gi", "300GB/s")
L4 = Gpu("L4", "24Gi")
L40S = Gpu("L40S", "48Gi")
A10G = Gpu("A10G", "24Gi")
T4 = Gpu("T4", "16Gi")

#: GPU feature discovery's product names (NVML's device name, spaces as '-').
NVIDIA_PRODUCTS: dict[str, Gpu] = {
    "NVIDIA-H100-80GB-HBM3": H100_SXM,
    "NVIDIA-H100-PCIe": H100_PCIE,
    "NVIDIA-H100-NVL": H100_NVL,
    "NVIDIA-H200": H200,
    "NVIDIA-B200": B200,
    "NVIDIA-A100-SXM4-80GB": A100_80,
    "NVIDIA-A100-SXM4-40GB": A100_40,
    "NVIDIA-A100-80GB-PCIe": A100_80_PCIE,
    "NVIDIA-A100-PCIE-40GB": A100_40_PCIE,
    "Tesla-V100-SXM2-16GB": V100_16,
    "Tesla-V100-SXM2-32GB": V100_32,
    "NVIDIA-L4": L4,
    "NVIDIA-L40S": L40S,
    "NVIDIA-A10G": A10G,
    "Tesla-T4": T4,
}

#: GKE accelerator types (GKE's "GPU platforms" page; machine series in comments).
GKE_ACCELERATORS: dict[str, Gpu] = {
    "nvidia-h100-80gb": H100_SXM,  # A3 High / Edge
    "nvidia-h100-mega-80gb": H100_SXM,  # A3 Mega
    "nvidia-h200-141gb": H200,  # A3 Ultra
    "nvidia-b200": B200,  # A4
    "nvidia-a100-80gb": A100_80,  # A2 Ultra
    "nvidia-tesla-a100": A100_40,  # A2 Standard
    "nvidia-tesla-v100": V100_16,  # N1 with V100 (16 GB on Compute Engine)
    "nvidia-l4": L4,  # G2
    "nvidia-tesla-t4": T4,  # N1 with T4
}

#: Karpenter's GPU names (from EC2's instance-type GPU info, lower case). None: the memory label
#: decides (A100 is 40 GB on p4d, 80 GB on p4de; V100 16 GB on p3, 32 GB on p3dn).
KARPENTER_GPUS: dict[str, Gpu] = {
    "h100": H100_SXM,  # p5
    "h200": H200,  # p5e, p5en
    "b200": B200,  # p6-b200
    "a100": Gpu("A100", None, "600GB/s"),
    "v100": Gpu("V100", None, "300GB/s"),
    "l4": L4,  # g6
    "l40s": L40S,  # g6e
    "a10g": A10G,  # g5
    "t4": T4,  # g4dn
}

#: One GPU's memory as a label states it in MiB: at most 16 TiB (no GPU is near that).
_MAX_MIB = 16 * 1024 * 1024


class RuntimeAccelerator(Record):
    """A runtime's accelerator, and the node label it was inferred from (``label``; None: written)."""

    accelerator: Accelerator
    label: str | None = None
    value: str | None = None

    @property
    def inferred(self) -> bool:
        return self.label is not None


def runtime_accelerator(runtime: RuntimeSpec) -> RuntimeAccelerator | None:
    """The accelerator of ``runtime``: written, else inferred from its node selector, else None."""
    if runtime.accelerator is not None:
        return RuntimeAccelerator(runtime.accelerator)
    selector = runtime.scheduling.node_selector if runtime.scheduling is not None else {}
    return from_labels(selector)


def from_labels(labels: Mapping[str, str]) -> RuntimeAccelerator | None:
    """The GPU that node ``labels`` (a node selector) name, by the most specific label that names one."""
    for label, table in ((GPU_PRODUCT_LABEL, NVIDIA_PRODUCTS), (GKE_ACCELERATOR_LABEL, GKE_ACCELERATORS)):
        value = labels.get(label)
        gpu = table.get(value) if value is not None else None
        if gpu is not None and value is not None:
            return _found(gpu, gpu.memory, label, value)
    value = labels.get(KARPENTER_GPU_NAME_LABEL)
    gpu = KARPENTER_GPUS.get(value.lower()) if value is not None else None
    if gpu is None or value is None:
        return None
    mib = labels.get(KARPENTER_GPU_MEMORY_LABEL, "")
    memory = f"{int(mib)}Mi" if mib.isascii() and mib.isdigit() and 0 < int(mib) <= _MAX_MIB else gpu.memory
    return _found(gpu, memory, KARPENTER_GPU_NAME_LABEL, value)


def _found(gpu: Gpu, memory: str | None, label: str, value: str) -> RuntimeAccelerator | None:
    if memory is None:
        return None
    accelerator = Accelerator(name=gpu.name, memory=Quantity.parse(memory), nvlink_bandwidth=gpu.nvlink)
    return RuntimeAccelerator(accelerator, label, value)


__all__ = ["Gpu", "RuntimeAccelerator", "from_labels", "runtime_accelerator"]
