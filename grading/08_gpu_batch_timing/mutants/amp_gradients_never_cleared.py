"""amp_train_step never clears the gradients: each step adds to the last one's."""
# replaces: amp_train_step
# caught by: test_amp_train_step, test_amp_train_step_hidden


def amp_train_step(model, optimizer, scaler, x, y, max_norm):
    with torch.autocast(x.device.type, dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
