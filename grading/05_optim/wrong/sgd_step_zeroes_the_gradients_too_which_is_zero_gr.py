"""sgd_step zeroes the gradients too, which is zero_grad's job."""
# exercise: sgd_step
# message: sgd_step

def sgd_step(params, learning_rate):
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= learning_rate * p.grad
                p.grad.zero_()
