"""amp_train_step with torch.amp.autocast(device_type=..., dtype=torch.half), set_to_none, the clipping written out
(the total norm over every gradient, scaled by min(1, max_norm / (norm + 1e-6)) as clip_grad_norm_ does)."""
# exercise: amp_train_step


def amp_train_step(model, optimizer, scaler, x, y, max_norm):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device_type=x.device.type, dtype=torch.half):
        logits = model(x)
        loss = nn.CrossEntropyLoss()(logits, y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    factor = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(factor)
    scaler.step(optimizer)
    scaler.update()
    return float(loss.detach())
