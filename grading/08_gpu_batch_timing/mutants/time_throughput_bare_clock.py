"""time_throughput reads time.perf_counter() without synchronizing: it times the queueing of the steps, not their work."""
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
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps
