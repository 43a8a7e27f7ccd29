"""answer_fan_out with integer gradients (7 and 14, not 7.0 and 14.0)."""
# exercise: answer_fan_out
answer_fan_out = {"hook_calls": 1, "grad": 7, "hook_calls_after_second": 2, "grad_after_second": 14}
