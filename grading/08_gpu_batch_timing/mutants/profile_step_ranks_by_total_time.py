"""profile_step ranks and adds the operators by their total CPU time, which includes the operators they call."""
# replaces: profile_step
# caught by: test_profile_step, test_profile_step_hidden


def profile_step(step):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        step()
    total = {row.key: row.cpu_time_total for row in prof.key_averages()}
    busiest = max(total, key=total.get)
    matmul = sum(t for key, t in total.items() if key in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"))
    return busiest, float(matmul / sum(total.values()))
