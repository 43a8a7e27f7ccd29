"""save_checkpoint clones every tensor of the model's state_dict by hand and deep-copies the optimizer's; load with strict=True."""
# exercise: load_checkpoint

def save_checkpoint(model, optimizer, step):
    return dict(step=step, model={k: v.detach().clone() for k, v in model.state_dict().items()},
                optimizer=copy.deepcopy(optimizer.state_dict()))


def load_checkpoint(model, optimizer, checkpoint):
    model.load_state_dict(checkpoint["model"], strict=True)
    optimizer.load_state_dict(checkpoint["optimizer"])
    step = checkpoint["step"]
    return step
