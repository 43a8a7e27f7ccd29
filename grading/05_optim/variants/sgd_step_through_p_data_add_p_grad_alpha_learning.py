"""sgd_step through p.data.add_(p.grad, alpha=-learning_rate)."""
# exercise: sgd_step

def sgd_step(params, learning_rate):
    for p in params:
        if p.grad is not None:
            p.data.add_(p.grad, alpha=-learning_rate)
