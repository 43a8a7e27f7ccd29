"""label_scores picks rows by label (scores[labels]) and then each row's first score."""
# replaces: label_scores
# caught by: test_label_scores, test_label_scores_hidden


def label_scores(scores, labels):
    return scores[labels][:, 0]
