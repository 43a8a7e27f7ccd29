"""matmul_tflops sets "highest" back afterwards instead of the precision it found."""
# exercise: matmul_tflops
# message: it was 'high' before the call


def matmul_tflops(n, dtype, device, tf32=False):
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    try:
        timer = benchmark.Timer(stmt="a @ b", globals={"a": a, "b": b}, timer=functools.partial(synchronized_timer, device))
        seconds = timer.blocked_autorange(min_run_time=0.2).median
    finally:
        torch.set_float32_matmul_precision("highest")
    return float(2 * n ** 3 / seconds / 1e12)
