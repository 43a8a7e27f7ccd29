"""answer_graph_alive taking every kept loss tensor for a live graph: backward() already freed what was saved."""
# replaces: answer_graph_alive
# caught by: test_answer_graph_alive
answer_graph_alive = {"append_loss": True, "append_item": False, "append_after_backward": True, "sum_into_total": True,
                      "append_under_no_grad": True, "append_detached": False}
