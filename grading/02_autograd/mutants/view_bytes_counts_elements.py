"""answer_view_bytes counts numbers, not bytes: the element size (4 for float32, 2 for bfloat16) left out."""
# replaces: answer_view_bytes
# caught by: test_answer_view_bytes
answer_view_bytes = {"swap_tokens_features": 0, "every_other_token": 0, "flatten_batch": 0,
                     "flatten_after_transpose": 64 * 1024 * 4096, "one_head": 64 * 1024 * 64, "mean_over_tokens": 64 * 4096,
                     "to_bfloat16": 64 * 1024 * 4096, "float": 0, "first_token": 0, "first_token_plus_one": 64 * 4096}
