"""profile_step with ProfilerActivity imported, the rows sorted by self time, the products found by name suffix."""
# exercise: profile_step

from torch.profiler import ProfilerActivity, profile


def profile_step(step):
    with profile(activities=[ProfilerActivity.CPU], record_shapes=False) as prof:
        step()
    rows = sorted(prof.key_averages(), key=lambda row: row.self_cpu_time_total, reverse=True)
    everything = sum(row.self_cpu_time_total for row in rows)
    products = sum(row.self_cpu_time_total for row in rows
                   if row.key.split("::")[-1] in {"mm", "addmm", "bmm", "baddbmm"})
    return rows[0].key, products / everything
