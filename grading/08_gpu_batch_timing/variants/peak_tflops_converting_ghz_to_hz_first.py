"""peak_tflops converting GHz to Hz first."""
# exercise: peak_tflops

def peak_tflops(sm_count, cores_per_sm, flops_per_cycle, ghz):
    return float(sm_count * cores_per_sm * flops_per_cycle * (ghz * 1e9)) / 1e12
