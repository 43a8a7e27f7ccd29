"""No zero_grad: the second step adds its gradient to the first step's (already all-reduced) one."""
# replaces: data_parallel_step
# caught by: test_data_parallel_step, test_data_parallel_step_hidden


def data_parallel_step(model, optimizer, x, y):
    count = torch.tensor(float(len(x)))
    dist.all_reduce(count)
    loss_sum = F.cross_entropy(model(x), y, reduction="sum")
    (loss_sum / count).backward()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
    optimizer.step()
    total = loss_sum.detach()
    dist.all_reduce(total)
    return float(total / count)
