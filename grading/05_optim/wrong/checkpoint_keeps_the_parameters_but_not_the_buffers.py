"""save_checkpoint keeps the model's parameters but not its buffers (batch norm's running statistics): the resumed run parts from the uninterrupted one."""
# exercise: save_checkpoint
# message: buffers

def save_checkpoint(model, optimizer, step):
    return {"model": {name: p.detach().clone() for name, p in model.named_parameters()},
            "optimizer": copy.deepcopy(optimizer.state_dict()), "step": step}


def load_checkpoint(model, optimizer, checkpoint):
    model.load_state_dict(checkpoint["model"], strict=False)
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["step"]
