"""time_throughput that waits with torch.accelerator.synchronize() (torch >= 2.6) on any device but the CPU, else
torch.cuda.current_stream().synchronize(); time.monotonic."""
# exercise: time_throughput


def time_throughput(model, batch_size, device, warmup, steps):
    def wait():
        if device.type == "cpu":
            return
        if hasattr(torch, "accelerator") and hasattr(torch.accelerator, "synchronize"):
            torch.accelerator.synchronize()
        else:
            torch.cuda.current_stream().synchronize()

    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape).to(device, non_blocking=True)
    y = torch.zeros(batch_size, dtype=torch.long).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

    for _ in range(warmup):
        step()
    wait()
    start = time.monotonic()
    for _ in range(steps):
        step()
    wait()
    return (time.monotonic() - start) / steps
