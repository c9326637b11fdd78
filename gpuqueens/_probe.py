"""The CUDA probe: can CuPy compile and run a kernel here, and which devices are visible?

This file imports nothing from gpuqueens on purpose: besides being imported by
:mod:`gpuqueens.backends`, it runs as a script in a fresh interpreter, which prints the
report as one line of JSON. That is how a process that must stay free of CUDA (one that is
about to start worker processes) learns what the machine has: the fresh process initialises
CUDA and exits, the caller never touches it (see :mod:`gpuqueens.fork_safety`).

    python gpuqueens/_probe.py
    {"usable": true, "reason": "ok", "devices": [{"name": "NVIDIA H100 80GB HBM3", "pci": "0000:19:00.0"}]}
"""

from __future__ import annotations

import json

PROBE_SOURCE = r"""
extern "C" __global__ void gpuqueens_probe(int* out) { out[threadIdx.x] = threadIdx.x + 1; }
"""


def probe() -> tuple[bool, str]:
    """``(usable, reason)``: whether CuPy runs a kernel on the current device, and why not.

    Initialises CUDA in the calling process. Never raises: every failure is a reason.
    """
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CuPy that fails while importing
        return False, f"CuPy is not installed or does not import ({exc.__class__.__name__}: {exc})"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False, "CuPy found no CUDA device"
        kernel = cupy.RawKernel(PROBE_SOURCE, "gpuqueens_probe")
        out = cupy.zeros(4, dtype=cupy.int32)
        kernel((1,), (4,), (out,))
        if out.get().tolist() != [1, 2, 3, 4]:
            return False, "the probe kernel ran but returned wrong values"
    except Exception as exc:  # driver, runtime or NVRTC problems all land here
        return False, f"CUDA is not usable ({exc.__class__.__name__}: {exc})"
    return True, "ok"


def visible_devices() -> list[dict[str, str]]:
    """Name and PCI address of every device CUDA shows this process (``CUDA_VISIBLE_DEVICES``)."""
    import cupy

    devices = []
    for index in range(cupy.cuda.runtime.getDeviceCount()):
        props = cupy.cuda.runtime.getDeviceProperties(index)
        name = props.get("name", b"?")
        name = name.decode() if isinstance(name, bytes) else str(name)
        pci = "{:04x}:{:02x}:{:02x}.0".format(
            int(props.get("pciDomainID", 0)), int(props.get("pciBusID", 0)),
            int(props.get("pciDeviceID", 0)))
        devices.append({"name": name, "pci": pci})
    return devices


def report() -> dict:
    """The probe's verdict and, when usable, the visible devices."""
    usable, reason = probe()
    devices: list[dict[str, str]] = []
    if usable:
        try:
            devices = visible_devices()
        except Exception as exc:
            usable, reason = False, f"CUDA is not usable ({exc.__class__.__name__}: {exc})"
    return {"usable": usable, "reason": reason, "devices": devices}


if __name__ == "__main__":
    print(json.dumps(report()))
