"""epoch_seconds as num_batches x the slower of load / workers and step: it forgets that the first batch must be loaded
before anything trains."""
# replaces: epoch_seconds
# caught by: test_epoch_seconds, test_epoch_seconds_hidden


def epoch_seconds(num_batches, load_seconds, step_seconds, num_workers):
    if num_workers == 0:
        return num_batches * (load_seconds + step_seconds)
    return num_batches * max(load_seconds / num_workers, step_seconds)
