"""answer_view_bytes counts every result's full size, as if views and transposes copied."""
# replaces: answer_view_bytes
# caught by: test_answer_view_bytes
answer_view_bytes = {"swap_tokens_features": 64 * 1024 * 4096 * 4, "every_other_token": 64 * 512 * 4096 * 4,
                     "flatten_batch": 64 * 1024 * 4096 * 4, "flatten_after_transpose": 64 * 1024 * 4096 * 4,
                     "one_head": 64 * 1024 * 64 * 4, "mean_over_tokens": 64 * 4096 * 4, "to_bfloat16": 64 * 1024 * 4096 * 2,
                     "float": 64 * 1024 * 4096 * 4, "first_token": 64 * 4096 * 4, "first_token_plus_one": 64 * 4096 * 4}
