"""Throughput inverted: samples_per_second = seconds / batch_size (that is seconds per sample)."""
# replaces: batch_size_sweep
# caught by: test_batch_size_sweep, test_batch_size_sweep_hidden


def batch_size_sweep(make_model, batch_sizes, device, warmup=3, repeats=10):
    results = []
    for batch_size in batch_sizes:
        seconds = time_throughput(make_model(), batch_size, device, warmup, repeats)
        results.append({"batch_size": batch_size, "seconds": seconds,
                        "samples_per_second": seconds / batch_size})
    return results
