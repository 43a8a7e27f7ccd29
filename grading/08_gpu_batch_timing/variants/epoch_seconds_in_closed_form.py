"""epoch_seconds in closed form: the epoch ends at the latest (batch i ready) + (the steps from i to the end)."""
# exercise: epoch_seconds


def epoch_seconds(num_batches, load_seconds, step_seconds, num_workers):
    if not num_workers:
        return float(num_batches) * (load_seconds + step_seconds)
    return max((i // num_workers + 1) * load_seconds + (num_batches - i) * step_seconds for i in range(num_batches))
