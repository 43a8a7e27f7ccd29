"""save_checkpoint serializes to bytes with torch.save (a real snapshot) inside the dict; load_checkpoint reads them back."""
# exercise: save_checkpoint

import io as _io


def save_checkpoint(model, optimizer, step):
    buffer = _io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    return {"blob": buffer.getvalue(), "step": int(step)}


def load_checkpoint(model, optimizer, checkpoint):
    states = torch.load(_io.BytesIO(checkpoint["blob"]), weights_only=False)
    model.load_state_dict(states["model"])
    optimizer.load_state_dict(states["optimizer"])
    return checkpoint["step"]
