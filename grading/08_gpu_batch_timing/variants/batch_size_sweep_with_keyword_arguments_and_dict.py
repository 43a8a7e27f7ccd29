"""batch_size_sweep with keyword arguments and dict()."""
# exercise: batch_size_sweep

def batch_size_sweep(make_model, batch_sizes, device, warmup=3, repeats=10):
    seconds = [time_throughput(model=make_model(), batch_size=b, device=device, warmup=warmup, steps=repeats)
               for b in batch_sizes]
    return [dict(batch_size=b, seconds=s, samples_per_second=b / s) for b, s in zip(batch_sizes, seconds)]
