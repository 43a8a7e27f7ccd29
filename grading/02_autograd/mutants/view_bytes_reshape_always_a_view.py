"""answer_view_bytes takes reshape for a view even after a transpose (and contiguous() for free on a slice)."""
# replaces: answer_view_bytes
# caught by: test_answer_view_bytes
answer_view_bytes = {"swap_tokens_features": 0, "every_other_token": 0, "flatten_batch": 0, "flatten_after_transpose": 0,
                     "one_head": 0, "mean_over_tokens": 64 * 4096 * 4, "to_bfloat16": 64 * 1024 * 4096 * 2, "float": 0,
                     "first_token": 0, "first_token_plus_one": 64 * 4096 * 4}
