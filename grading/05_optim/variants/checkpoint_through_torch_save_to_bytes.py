"""save_checkpoint snapshots everything by a torch.save / torch.load round trip in memory; load_checkpoint in another order."""
# exercise: save_checkpoint

import io as _io


def _snapshot(state):
    buffer = _io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=False)


def save_checkpoint(model, optimizer, step, scheduler=None, generator=None):
    return _snapshot({"step": int(step), "optimizer": optimizer.state_dict(), "model": model.state_dict(),
                      "rng_state": torch.get_rng_state(),
                      "scheduler": scheduler.state_dict() if scheduler is not None else None,
                      "generator": generator.get_state() if generator is not None else None})


def load_checkpoint(model, optimizer, checkpoint, scheduler=None, generator=None):
    torch.set_rng_state(checkpoint["rng_state"])
    if generator is not None:
        generator.set_state(checkpoint["generator"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.load_state_dict(checkpoint["model"])
    if scheduler is not None:
        scheduler.load_state_dict(checkpoint["scheduler"])
    return checkpoint["step"]
