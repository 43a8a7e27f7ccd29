"""time_train_step returns seconds per sample."""
# exercise: time_train_step
# message: not per sample

def time_train_step(model, batch_size, device, warmup, repeats):
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    times = []
    for _ in range(warmup + repeats):
        start = benchmark.timer()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        times.append(benchmark.timer() - start)
    return statistics.median(times[warmup:]) / batch_size
