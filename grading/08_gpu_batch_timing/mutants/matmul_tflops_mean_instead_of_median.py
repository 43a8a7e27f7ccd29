"""matmul_tflops divides by the mean seconds of a product: one slow product (another process woke up) moves the answer."""
# replaces: matmul_tflops
# caught by: test_matmul_tflops, test_matmul_tflops_hidden


def matmul_tflops(n, dtype, device, tf32=False):
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    try:
        timer = benchmark.Timer(stmt="a @ b", globals={"a": a, "b": b}, num_threads=torch.get_num_threads(),
                                timer=functools.partial(synchronized_timer, device))
        seconds = timer.blocked_autorange(min_run_time=0.2).mean
    finally:
        torch.set_float32_matmul_precision(previous)
    return float(2 * n ** 3 / seconds / 1e12)
