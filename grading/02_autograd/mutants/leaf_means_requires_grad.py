"""Leaf taken to mean "requires grad": x, made without requires_grad, is answered as not a leaf."""
# replaces: answer_is_leaf
# caught by: test_answer_is_leaf
answer_is_leaf = {"x": False, "w": True, "prediction": False, "loss": False}
