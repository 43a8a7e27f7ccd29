"""data_parallel_step with the local mean's gradients scaled by n_r / N after backward, all sent in one flat buffer."""
# exercise: data_parallel_step

def data_parallel_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    counts = torch.tensor([float(len(x)), loss.item() * len(x)])  # samples, sum of losses
    dist.all_reduce(counts)
    params = [p for p in model.parameters() if p.grad is not None]
    flat = torch.cat([p.grad.reshape(-1) for p in params]) * (len(x) / counts[0])
    dist.all_reduce(flat)
    offset = 0
    for p in params:
        p.grad.copy_(flat[offset:offset + p.numel()].view_as(p))
        offset += p.numel()
    optimizer.step()
    return (counts[1] / counts[0]).item()
