"""time_train_step with CUDA events that reads elapsed_time without waiting for the end event (on a GPU: "device not ready")."""
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
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            times.append(start.elapsed_time(end) / 1e3)
        else:
            begin = time.perf_counter()
            step()
            times.append(time.perf_counter() - begin)
    return float(statistics.median(times))
