"""No all-reduce: every rank steps on the gradient of its own slice, and the copies drift apart."""
# replaces: data_parallel_step
# caught by: test_data_parallel_step, test_data_parallel_step_hidden


def data_parallel_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
