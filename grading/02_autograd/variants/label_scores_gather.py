"""label_scores with gather along the class dimension."""
# exercise: label_scores


def label_scores(scores, labels):
    return scores.gather(1, labels[:, None]).squeeze(1)
