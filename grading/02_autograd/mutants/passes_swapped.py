"""answer_passes swaps the modes: one forward pass for a gradient, one reverse pass per input."""
# replaces: answer_passes
# caught by: test_answer_passes
answer_passes = {"gradient_forward": 1, "gradient_reverse": 1_000_000, "jacobian_forward": 1000, "jacobian_reverse": 3}
