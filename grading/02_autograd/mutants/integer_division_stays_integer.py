"""answer_promotion treats / like Python 2's integer division, and lets any float64 operand widen the result."""
# replaces: answer_promotion
# caught by: test_answer_promotion
answer_promotion = {"int64_div_2": torch.int64, "int64_floordiv_2": torch.int64, "int32_plus_1_5": torch.float32,
                    "int32_plus_int64_0d": torch.int64, "float16_plus_float64_0d": torch.float64,
                    "float32_plus_float64": torch.float64}
