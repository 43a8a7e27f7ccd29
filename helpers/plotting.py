"""Plots the notebooks share: loss curves and train/validation curves."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt


def plot_losses(losses: Sequence[float] | Mapping[str, Sequence[float]], title: str = "Training loss",
                log_scale: bool = True, xlabel: str = "step", ax: plt.Axes | None = None) -> plt.Axes:
    """Plot one loss curve, or several given as {label: losses}, against the step."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    curves = losses if isinstance(losses, Mapping) else {"loss": losses}
    for label, values in curves.items():
        ax.plot(range(len(values)), [float(v) for v in values], label=label)
    if log_scale:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("loss")
    ax.set_title(title)
    if len(curves) > 1:
        ax.legend()
    ax.grid(True, alpha=0.3)
    plt.tight_layout()
    return ax


def plot_history(history: Mapping[str, Sequence[float]], title: str = "Training history") -> plt.Figure:
    """Train/validation curves from a history dict: keys ending in 'loss' left, the rest right."""
    loss_keys = [k for k in history if k.endswith("loss")]
    other_keys = [k for k in history if k not in loss_keys and len(history[k]) > 0]
    ncols = 2 if other_keys else 1
    fig, axes = plt.subplots(1, ncols, figsize=(5 * ncols, 3.5), squeeze=False)
    for keys, ax, ylabel in ((loss_keys, axes[0][0], "loss"), (other_keys, axes[0][-1], "value")):
        if not keys:
            continue
        for key in keys:
            epochs = range(1, len(history[key]) + 1)
            ax.plot(epochs, [float(v) for v in history[key]], marker="o", label=key)
        ax.set_xlabel("epoch")
        ax.set_ylabel(ylabel)
        ax.legend()
        ax.grid(True, alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return fig
