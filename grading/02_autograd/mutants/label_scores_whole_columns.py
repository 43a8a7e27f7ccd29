"""label_scores indexes the columns only (scores[:, labels]): every row's scores for every label, (n, n)."""
# replaces: label_scores
# caught by: test_label_scores, test_label_scores_hidden


def label_scores(scores, labels):
    return scores[:, labels]
