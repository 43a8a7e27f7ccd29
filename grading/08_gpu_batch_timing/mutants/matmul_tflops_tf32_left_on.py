"""The TF32 setting changed for the measurement and never restored: every later float32 product in the program runs in TF32."""
# replaces: matmul_tflops
# caught by: test_matmul_tflops, test_matmul_tflops_hidden


def matmul_tflops(n, dtype, device, tf32=False):
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    timer = benchmark.Timer(stmt="a @ b", globals={"a": a, "b": b}, num_threads=torch.get_num_threads(),
                            timer=functools.partial(synchronized_timer, device))
    seconds = timer.blocked_autorange(min_run_time=0.2).median
    return float(2 * n ** 3 / seconds / 1e12)
