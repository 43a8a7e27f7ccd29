"""time_throughput starts the clock before the warm-up: the slow first steps are billed to the timed ones."""
# replaces: time_throughput
# caught by: test_time_throughput, test_time_throughput_hidden


def time_throughput(model, batch_size, device, warmup, steps):
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    start = synchronized_timer(device)
    for _ in range(warmup + steps):
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    return (synchronized_timer(device) - start) / (warmup + steps)
