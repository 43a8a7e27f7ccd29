"""amp_train_step clips the gradients while they are still multiplied by the scale: max_norm then bounds S times them."""
# replaces: amp_train_step
# caught by: test_amp_train_step, test_amp_train_step_hidden


def amp_train_step(model, optimizer, scaler, x, y, max_norm):
    optimizer.zero_grad()
    with torch.autocast(x.device.type, dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
