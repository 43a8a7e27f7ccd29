"""answer_view_bytes in NumPy ints and powers of two (1 GiB = 2**30), as a student computing with np.prod may answer."""
# exercise: answer_view_bytes
answer_view_bytes = {"swap_tokens_features": np.int64(0), "every_other_token": 0, "flatten_batch": 0,
                     "flatten_after_transpose": 2 ** 30, "one_head": int(np.prod([64, 1024, 64])) * 4,
                     "mean_over_tokens": np.prod([64, 4096]) * 4, "to_bfloat16": 2 ** 29, "float": 0,
                     "first_token": 0, "first_token_plus_one": np.int64(2 ** 20)}
