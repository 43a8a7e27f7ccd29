"""batch_size_sweep times one model for every batch size."""
# exercise: batch_size_sweep
# message: fresh make_model()

def batch_size_sweep(make_model, batch_sizes, device, warmup=3, repeats=10):
    model = make_model()
    results = []
    for b in batch_sizes:
        s = time_throughput(model, b, device, warmup, repeats)
        results.append({"batch_size": b, "seconds": s, "samples_per_second": b / s})
    return results
