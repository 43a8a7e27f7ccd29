"""time_throughput with `from torch.cuda import synchronize`, called with the device when CUDA is available,
and time.perf_counter_ns."""
# exercise: time_throughput

from time import perf_counter_ns

from torch.cuda import synchronize as wait_for_cuda


def time_throughput(model, batch_size, device, warmup, steps):
    model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for i in range(warmup + steps):
        if i == warmup:
            if torch.cuda.is_available() and device.type == "cuda":
                wait_for_cuda(device)
            start = perf_counter_ns()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    if torch.cuda.is_available() and device.type == "cuda":
        wait_for_cuda(device)
    return (perf_counter_ns() - start) / 1e9 / steps
