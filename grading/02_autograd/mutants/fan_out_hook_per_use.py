"""answer_fan_out expects the leaf to be reached once per use (three hook calls, .grad added to three times)."""
# replaces: answer_fan_out
# caught by: test_answer_fan_out
answer_fan_out = {"hook_calls": 3, "grad": 7.0, "hook_calls_after_second": 6, "grad_after_second": 14.0}
