"""Value's matrix product gets its gradients from torch.autograd on tensor copies: the engine is NumPy by hand."""
# exercise: Value
# message: called PyTorch

NumPyValue = Value


class Value(NumPyValue):
    def __matmul__(self, other):
        out = Value(self.data @ other.data, (self, other))

        def _backward():
            a = torch.tensor(self.data, requires_grad=True)
            b = torch.tensor(other.data, requires_grad=True)
            grad_a, grad_b = torch.autograd.grad(a @ b, (a, b), torch.tensor(out.grad))
            self.grad += grad_a.numpy()
            other.grad += grad_b.numpy()

        out._backward = _backward
        return out
