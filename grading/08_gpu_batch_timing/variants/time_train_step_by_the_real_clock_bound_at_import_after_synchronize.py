"""time_train_step by the real clock bound at import (from time import perf_counter), read after helpers.timing.synchronize:
judged on the real sleeps."""
# exercise: time_train_step

from time import perf_counter as wall_clock

from helpers.timing import synchronize as wait_for


def time_train_step(model, batch_size, device, warmup, repeats):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for i in range(warmup + repeats):
        x = torch.randn(batch_size, *model.input_shape, device=device)
        y = torch.zeros(batch_size, dtype=torch.long, device=device)
        wait_for(device)
        start = wall_clock()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        wait_for(device)
        if i >= warmup:
            times.append(wall_clock() - start)
    return sorted(times)[len(times) // 2]
