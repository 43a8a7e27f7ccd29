"""time_train_step that waits for the GPU before starting the clock but not before stopping it: it times the queueing."""
# replaces: time_train_step
# caught by: test_time_train_step, test_time_train_step_hidden


def time_train_step(model, batch_size, device, warmup, repeats):
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return float(statistics.median(times))
