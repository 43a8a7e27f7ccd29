"""answer_promotion written another way: torch.result_type, the default dtype, and the aliases half and double."""
# exercise: answer_promotion
answer_promotion = {"int64_div_2": torch.result_type(torch.tensor([1]), 2.0),
                    "int64_floordiv_2": torch.int64, "int32_plus_1_5": torch.get_default_dtype(),
                    "int32_plus_int64_0d": torch.int32, "float16_plus_float64_0d": torch.half,
                    "float32_plus_float64": torch.double}
