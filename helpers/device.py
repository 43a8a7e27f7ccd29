"""Device choice: CUDA if present, then Apple's MPS, then the CPU."""

from __future__ import annotations

import torch


def pick_device(prefer: str | None = None) -> torch.device:
    """The best available device, or `prefer` ("cpu", "cuda", "mps") when it is available."""
    if prefer is not None:
        if prefer == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("CUDA was asked for but torch.cuda.is_available() is False.")
        if prefer == "mps" and not _mps_available():
            raise RuntimeError("MPS was asked for but torch.backends.mps.is_available() is False.")
        return torch.device(prefer)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def describe_device(device: torch.device) -> str:
    """One line for the student: which device runs the notebook."""
    device = torch.device(device)
    if device.type == "cuda":
        return f"Using GPU: {torch.cuda.get_device_name(device)}"
    if device.type == "mps":
        return "Using GPU: Apple MPS"
    return f"Using CPU ({torch.get_num_threads()} threads): the GPU parts will run, slower"


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())
