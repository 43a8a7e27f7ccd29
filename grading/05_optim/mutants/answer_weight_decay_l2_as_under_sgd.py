"""answer_weight_decay takes the L2 term under Adam for SGD's decay: lr * weight_decay * p0, ten times larger for ten times the decay."""
# replaces: answer_weight_decay
# caught by: test_answer_weight_decay
answer_weight_decay = {"adam_l2_small": 0.1 * 0.01 * 2, "adam_l2_large": 0.1 * 0.1 * 2,
                       "adamw_small": 0.1 * 0.01 * 2, "adamw_large": 0.1 * 0.1 * 2}
