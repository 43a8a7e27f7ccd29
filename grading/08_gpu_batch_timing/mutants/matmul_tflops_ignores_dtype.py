"""The matrices made in the default float32 whatever dtype asks for: the bfloat16 measurement times float32 products."""
# replaces: matmul_tflops
# caught by: test_matmul_tflops_hidden


def matmul_tflops(n, dtype, device, tf32=False):
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    try:
        timer = benchmark.Timer(stmt="a @ b", globals={"a": a, "b": b}, num_threads=torch.get_num_threads(),
                                timer=functools.partial(synchronized_timer, device))
        seconds = timer.blocked_autorange(min_run_time=0.2).median
    finally:
        torch.set_float32_matmul_precision(previous)
    return float(2 * n ** 3 / seconds / 1e12)
