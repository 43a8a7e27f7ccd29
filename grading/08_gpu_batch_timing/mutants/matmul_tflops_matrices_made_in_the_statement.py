"""matmul_tflops makes its random matrices inside the timed statement: drawing them is billed to the product."""
# replaces: matmul_tflops
# caught by: test_matmul_tflops, test_matmul_tflops_hidden


def matmul_tflops(n, dtype, device, tf32=False):
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    try:
        timer = benchmark.Timer(stmt="torch.randn(n, n, device=device).to(dtype) @ torch.randn(n, n, device=device).to(dtype)",
                                globals={"torch": torch, "n": n, "device": device, "dtype": dtype},
                                num_threads=torch.get_num_threads(), timer=functools.partial(synchronized_timer, device))
        seconds = timer.blocked_autorange(min_run_time=0.2).median
    finally:
        torch.set_float32_matmul_precision(previous)
    return float(2 * n ** 3 / seconds / 1e12)
