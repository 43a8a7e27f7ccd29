"""epoch_seconds divides the whole epoch by the number of workers, as if workers also ran the training steps."""
# replaces: epoch_seconds
# caught by: test_epoch_seconds, test_epoch_seconds_hidden


def epoch_seconds(num_batches, load_seconds, step_seconds, num_workers):
    return num_batches * (load_seconds + step_seconds) / max(num_workers, 1)
