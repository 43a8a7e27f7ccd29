"""time_train_step that waits only where the device is CUDA (torch.cuda.synchronize() under device.type == "cuda"),
reading time.perf_counter: right on CUDA and on a CPU."""
# exercise: time_train_step


def time_train_step(model, batch_size, device, warmup, repeats):
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def now():
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter()

    for _ in range(warmup):
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    times = []
    for _ in range(repeats):
        start = now()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        times.append(now() - start)
    return float(statistics.median(times))
