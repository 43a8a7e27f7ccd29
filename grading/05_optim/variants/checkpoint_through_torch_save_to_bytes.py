"""save_checkpoint snapshots each state_dict by a torch.save / torch.load round trip in memory; load_checkpoint in another order."""
# exercise: save_checkpoint

import io as _io


def _snapshot(state):
    buffer = _io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=False)


def save_checkpoint(model, optimizer, step):
    return {"step": int(step), "optimizer": _snapshot(optimizer.state_dict()), "model": _snapshot(model.state_dict())}


def load_checkpoint(model, optimizer, checkpoint):
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.load_state_dict(checkpoint["model"])
    return checkpoint["step"]
