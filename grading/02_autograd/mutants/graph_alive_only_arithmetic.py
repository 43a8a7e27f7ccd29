"""answer_graph_alive with only the arithmetic keeping graphs alive: a kept, never-backwarded loss does too."""
# replaces: answer_graph_alive
# caught by: test_answer_graph_alive
answer_graph_alive = {"append_loss": False, "append_item": False, "append_after_backward": False, "sum_into_total": True,
                      "append_under_no_grad": False, "append_detached": False}
