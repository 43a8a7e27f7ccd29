"""unbroadcast sums away one added leading dimension (if, not while): a bias (H,) added to (B, N, H) gets a (N, H) gradient."""
# replaces: Value
# caught by: test_Value, test_Value_hidden


class Value:
    """A node of a tiny reverse-mode engine: data (a float64 array), grad (same shape, zeros at first),
    parents (the Values it was computed from), and _backward, which adds this node's grad, pushed back
    through its operation, into every parent's grad."""

    def __init__(self, data, parents=()):
        self.data = np.asarray(data, dtype=np.float64)
        self.grad = np.zeros_like(self.data)
        self.parents = tuple(parents)
        self._backward = lambda: None  # a leaf has nothing to push back

    @staticmethod
    def unbroadcast(grad, shape):
        """grad: the gradient of a result NumPy broadcast from an input of `shape`; returns it summed back to `shape`."""
        grad = np.asarray(grad)
        if grad.ndim > len(shape):
            grad = grad.sum(axis=0)
        for axis, size in enumerate(shape):
            if size == 1 and grad.shape[axis] != 1:
                grad = grad.sum(axis=axis, keepdims=True)
        return grad

    def __add__(self, other):
        """self + other, with NumPy broadcasting: (N, H) + (H,), (N, H) + (N, 1), (N, H) + a number."""
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))

        def _backward():
            self.grad += Value.unbroadcast(out.grad, self.data.shape)
            other.grad += Value.unbroadcast(out.grad, other.data.shape)

        out._backward = _backward
        return out

    def __mul__(self, other):
        """self * other, elementwise, with NumPy broadcasting."""
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other))

        def _backward():
            self.grad += Value.unbroadcast(out.grad * other.data, self.data.shape)
            other.grad += Value.unbroadcast(out.grad * self.data, other.data.shape)

        out._backward = _backward
        return out

    def __matmul__(self, other):
        """self @ other for 2-D arrays: (N, K) @ (K, M) -> (N, M)."""
        out = Value(self.data @ other.data, (self, other))

        def _backward():
            self.grad += out.grad @ other.data.T
            other.grad += self.data.T @ out.grad

        out._backward = _backward
        return out

    def relu(self):
        """max(self, 0), elementwise."""
        out = Value(np.maximum(self.data, 0.0), (self,))

        def _backward():
            self.grad += out.grad * (self.data > 0)

        out._backward = _backward
        return out

    def sum(self):
        """The sum of all entries: a 0-d Value."""
        out = Value(self.data.sum(), (self,))

        def _backward():
            self.grad += np.broadcast_to(out.grad, self.data.shape)

        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-other if isinstance(other, Value) else Value(-np.asarray(other, dtype=np.float64)))

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __repr__(self):
        return f"Value(shape={self.data.shape})"
