"""answer_weight_decay forgets Adam's correction on the first step: (1 - beta1) g over sqrt((1 - beta2) g**2), about 3.16 lr."""
# replaces: answer_weight_decay
# caught by: test_answer_weight_decay
answer_weight_decay = {"adam_l2_small": 0.1 * 0.1 * 0.02 / ((0.001 * 0.02**2) ** 0.5 + 1e-8),
                       "adam_l2_large": 0.1 * 0.1 * 0.2 / ((0.001 * 0.2**2) ** 0.5 + 1e-8),
                       "adamw_small": 0.002, "adamw_large": 0.02}
