"""time_train_step timed by CUDA events on a GPU (record, synchronize the end event, elapsed_time in ms),
by time.perf_counter elsewhere; .cuda() on the batch."""
# exercise: time_train_step


def time_train_step(model, batch_size, device, warmup, repeats):
    on_gpu = device.type == "cuda"
    model.to(device)
    x = torch.randn(batch_size, *model.input_shape)
    y = torch.zeros(batch_size, dtype=torch.long)
    x, y = (x.cuda(), y.cuda()) if on_gpu else (x, y)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()

    for _ in range(warmup):
        step()
    seconds = []
    for _ in range(repeats):
        if on_gpu:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            seconds.append(start.elapsed_time(end) / 1e3)
        else:
            begin = time.perf_counter()
            step()
            seconds.append(time.perf_counter() - begin)
    seconds.sort()
    middle = len(seconds) // 2
    return seconds[middle] if len(seconds) % 2 else (seconds[middle - 1] + seconds[middle]) / 2
