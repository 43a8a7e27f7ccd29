"""detach() taken for a copy of the data (as the slide puts it): it is a new tensor over the same memory."""
# replaces: answer_detach
# caught by: test_answer_detach
answer_detach = {"requires_grad": False, "shares_memory": False, "numpy_raises": True}
