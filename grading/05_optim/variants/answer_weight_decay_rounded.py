"""answer_weight_decay with eps left out of the L2 steps (lr itself) and NumPy floats."""
# exercise: answer_weight_decay

answer_weight_decay = {"adam_l2_small": np.float64(0.1), "adam_l2_large": 0.1, "adamw_small": 0.002,
                       "adamw_large": np.float32(0.02)}
