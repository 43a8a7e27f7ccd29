"""matmul_tflops with benchmark.Timer on a synchronizing clock of its own built on time.monotonic, and the precision set by the legacy-free API."""
# exercise: matmul_tflops

import time as _time


def matmul_tflops(n, dtype, device, tf32=False):
    def clock():
        if device.type == "cuda":
            torch.cuda.synchronize()
        return _time.monotonic()

    a, b = (torch.randn(n, n, device=device, dtype=torch.float32).to(dtype) for _ in range(2))
    saved = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
        measurement = benchmark.Timer("a @ b", globals=dict(a=a, b=b), num_threads=torch.get_num_threads(),
                                      timer=clock).blocked_autorange(min_run_time=0.2)
    finally:
        torch.set_float32_matmul_precision(saved)
    return 2.0 * n ** 3 / measurement.median / 1e12
