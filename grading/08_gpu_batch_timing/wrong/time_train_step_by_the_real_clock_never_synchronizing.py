"""time_train_step by the real clock bound at import (from time import perf_counter), never waiting for the device: on an
asynchronous device it times the queueing, not the work."""
# exercise: time_train_step
# message: before the device had finished

from time import perf_counter as wall_clock


def time_train_step(model, batch_size, device, warmup, repeats):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for i in range(warmup + repeats):
        x = torch.randn(batch_size, *model.input_shape, device=device)
        y = torch.zeros(batch_size, dtype=torch.long, device=device)
        start = wall_clock()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if i >= warmup:
            times.append(wall_clock() - start)
    return sorted(times)[len(times) // 2]
