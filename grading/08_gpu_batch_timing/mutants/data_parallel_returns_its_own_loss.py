"""The step is right, but each rank returns the mean loss of its own slice, not the whole batch's."""
# replaces: data_parallel_step
# caught by: test_data_parallel_step, test_data_parallel_step_hidden


def data_parallel_step(model, optimizer, x, y):
    optimizer.zero_grad()
    count = torch.tensor(float(len(x)))
    dist.all_reduce(count)
    loss_sum = F.cross_entropy(model(x), y, reduction="sum")
    (loss_sum / count).backward()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
    optimizer.step()
    return float(loss_sum.detach() / len(x))
