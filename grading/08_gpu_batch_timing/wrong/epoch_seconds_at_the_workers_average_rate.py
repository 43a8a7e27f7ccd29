"""epoch_seconds at the workers' average rate: the first batch, then one every max(step, load / workers), as if the
workers delivered batches evenly rather than w at a time."""
# exercise: epoch_seconds
# message: w at a time


def epoch_seconds(num_batches, load_seconds, step_seconds, num_workers):
    if num_workers == 0:
        return num_batches * (load_seconds + step_seconds)
    return load_seconds + step_seconds + (num_batches - 1) * max(step_seconds, load_seconds / num_workers)
