"""Each rank's mean gradient all-reduced and divided by the number of ranks: right for equal slices, wrong for unequal ones."""
# replaces: data_parallel_step
# caught by: test_data_parallel_step, test_data_parallel_step_hidden


def data_parallel_step(model, optimizer, x, y):
    world = dist.get_world_size()
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
        parameter.grad /= world
    optimizer.step()
    total = loss.detach().clone()
    dist.all_reduce(total)
    return (total / world).item()
