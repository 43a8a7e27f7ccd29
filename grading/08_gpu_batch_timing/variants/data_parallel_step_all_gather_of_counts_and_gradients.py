"""data_parallel_step with all_gather: every rank gathers all the counts and all the gradients, and weighs them itself."""
# exercise: data_parallel_step

def data_parallel_step(model, optimizer, x, y):
    world = dist.get_world_size()
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    mine = torch.tensor([float(len(x)), float(loss.detach()) * len(x)], dtype=torch.float64)
    everyone = [torch.zeros(2, dtype=torch.float64) for _ in range(world)]
    dist.all_gather(everyone, mine)
    total = sum(e[0] for e in everyone)
    for p in model.parameters():
        grads = [torch.zeros_like(p.grad) for _ in range(world)]
        dist.all_gather(grads, p.grad)
        p.grad.copy_(sum(g * (e[0] / total).float() for g, e in zip(grads, everyone)))
    optimizer.step()
    return float(sum(e[1] for e in everyone) / total)
