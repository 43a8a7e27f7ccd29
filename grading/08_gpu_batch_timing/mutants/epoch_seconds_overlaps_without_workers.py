"""epoch_seconds treats num_workers=0 as one worker: without workers the main process loads, and nothing overlaps."""
# replaces: epoch_seconds
# caught by: test_epoch_seconds, test_epoch_seconds_hidden


def epoch_seconds(num_batches, load_seconds, step_seconds, num_workers):
    workers = max(num_workers, 1)
    done = 0.0
    for i in range(num_batches):
        done = max(done, (i // workers + 1) * load_seconds) + step_seconds
    return done
