"""time_throughput with a clock of its own built on time.monotonic after helpers.timing.synchronize, steps in a list comprehension."""
# exercise: time_throughput

import time as _time

import helpers.timing as _timing


def time_throughput(model, batch_size, device, warmup, steps):
    def clock():
        _timing.synchronize(device)
        return _time.monotonic()

    model.to(device)
    inputs = torch.randn((batch_size,) + tuple(model.input_shape), device=device)
    labels = torch.zeros(batch_size, dtype=torch.int64, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)

    def one_step():
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(inputs), labels).backward()
        optimizer.step()

    [one_step() for _ in range(warmup)]
    begin = clock()
    [one_step() for _ in range(steps)]
    return (clock() - begin) / steps
