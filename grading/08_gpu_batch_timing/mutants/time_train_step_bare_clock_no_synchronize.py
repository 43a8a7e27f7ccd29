"""time_train_step reads time.perf_counter() around each step without synchronizing: right on a CPU, wrong on a GPU."""
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
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return float(statistics.median(times))
