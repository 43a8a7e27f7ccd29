"""amp_train_step unscales and clips, then calls optimizer.step() itself: it steps on gradients that overflowed."""
# replaces: amp_train_step
# caught by: test_amp_train_step


def amp_train_step(model, optimizer, scaler, x, y, max_norm):
    optimizer.zero_grad()
    with torch.autocast(x.device.type, dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scaler.update()
    return loss.item()
