"""answer_inplace believes every in-place change of a result breaks backward(), saved for backward or not."""
# replaces: answer_inplace
# caught by: test_answer_inplace
answer_inplace = {"exp_then_add": True, "double_then_add": True, "leaf_add": True, "leaf_add_under_no_grad": False}
