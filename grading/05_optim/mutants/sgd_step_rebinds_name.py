"""sgd_step rebinds the loop variable (p = p - learning_rate * p.grad), so no parameter changes."""
# replaces: sgd_step
# caught by: test_sgd_step, test_sgd_step_hidden
def sgd_step(params, learning_rate):
    with torch.no_grad():
        for p in params:
            if p.grad is None:
                continue
            p = p - learning_rate * p.grad
