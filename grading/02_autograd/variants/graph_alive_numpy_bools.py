"""answer_graph_alive with NumPy booleans (what a comparison of arrays gives): the same answer."""
# exercise: answer_graph_alive
import numpy as np

answer_graph_alive = {"append_loss": np.True_, "append_item": np.False_, "append_after_backward": np.False_,
                      "sum_into_total": np.True_, "append_under_no_grad": np.False_, "append_detached": np.False_}
