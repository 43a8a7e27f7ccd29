"""The ranks' mean gradients all-reduced and never divided: a step as large as the sum of the ranks' means."""
# replaces: data_parallel_step
# caught by: test_data_parallel_step, test_data_parallel_step_hidden


def data_parallel_step(model, optimizer, x, y):
    optimizer.zero_grad()
    count = torch.tensor(float(len(x)))
    dist.all_reduce(count)
    loss_sum = F.cross_entropy(model(x), y, reduction="sum")
    loss_sum.div(len(x)).backward()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
    optimizer.step()
    total = loss_sum.detach()
    dist.all_reduce(total)
    return float(total / count)
