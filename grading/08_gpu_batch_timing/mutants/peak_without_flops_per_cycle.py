"""peak_tflops counts cores x clock but forgets the FLOPs per cycle (a fused multiply-add is 2 FLOPs)."""
# replaces: peak_tflops
# caught by: test_peak_tflops, test_peak_tflops_hidden


def peak_tflops(sm_count, cores_per_sm, flops_per_cycle, ghz):
    return sm_count * cores_per_sm * ghz / 1e3
