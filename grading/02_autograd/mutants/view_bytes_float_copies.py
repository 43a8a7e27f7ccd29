"""answer_view_bytes has x.float() copy a tensor that is float32 already (and bfloat16 keep 4 bytes a number)."""
# replaces: answer_view_bytes
# caught by: test_answer_view_bytes
answer_view_bytes = {"swap_tokens_features": 0, "every_other_token": 0, "flatten_batch": 0,
                     "flatten_after_transpose": 64 * 1024 * 4096 * 4, "one_head": 64 * 1024 * 64 * 4,
                     "mean_over_tokens": 64 * 4096 * 4, "to_bfloat16": 64 * 1024 * 4096 * 4, "float": 64 * 1024 * 4096 * 4,
                     "first_token": 0, "first_token_plus_one": 64 * 4096 * 4}
