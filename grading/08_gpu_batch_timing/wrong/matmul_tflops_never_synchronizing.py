"""matmul_tflops timed by benchmark.Timer on time.perf_counter, a clock that never waits for the device: right on a
CPU, where a product has finished when it returns; on a GPU it times the launches, not the products."""
# exercise: matmul_tflops
# message: does not wait for the device


def matmul_tflops(n, dtype, device, tf32=False):
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    try:
        timer = benchmark.Timer(stmt="a @ b", globals={"a": a, "b": b}, timer=time.perf_counter)
        seconds = timer.blocked_autorange(min_run_time=0.2).median
    finally:
        torch.set_float32_matmul_precision(previous)
    return 2 * n ** 3 / seconds / 1e12
