"""answer_memory takes reshape for a view in every case (and a dtype conversion for a view of its source)."""
# replaces: answer_memory
# caught by: test_answer_memory
answer_memory = {"view": True, "transpose": True, "reshape_of_transpose": True, "contiguous_of_transpose": False,
                 "from_numpy": True, "torch_tensor": False, "float_of_from_numpy": True}
