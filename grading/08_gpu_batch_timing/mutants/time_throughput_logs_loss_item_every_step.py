"""time_throughput logs loss.item() in every step: each .item() waits for the device, so the steps no longer overlap."""
# replaces: time_throughput
# caught by: test_time_throughput, test_time_throughput_hidden


def time_throughput(model, batch_size, device, warmup, steps):
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(warmup):
        step()
    losses = []
    start = synchronized_timer(device)
    for _ in range(steps):
        losses.append(step().item())
    return (synchronized_timer(device) - start) / steps
