"""sgd_step adds the gradient (p += learning_rate * p.grad): it climbs the loss instead of descending."""
# replaces: sgd_step
# caught by: test_sgd_step, test_sgd_step_hidden
def sgd_step(params, learning_rate):
    with torch.no_grad():
        for p in params:
            if p.grad is None:
                continue
            p += learning_rate * p.grad
