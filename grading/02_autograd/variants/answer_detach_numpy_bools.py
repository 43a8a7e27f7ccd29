"""answer_detach with NumPy booleans."""
# exercise: answer_detach

answer_detach = {"requires_grad": np.bool_(False), "shares_memory": np.bool_(True), "numpy_raises": True}
