"""matmul_tflops by hand: the allow_tf32 flag saved and restored, a median over single products on a clock bound at import."""
# exercise: matmul_tflops

from time import perf_counter as clock


def matmul_tflops(n, dtype, device, tf32=False):
    a, b = torch.randn(n, n, dtype=dtype, device=device), torch.randn(n, n, dtype=dtype, device=device)
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = bool(tf32)
    try:
        torch.matmul(a, b)  # warm-up
        times = []
        for _ in range(9):
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = clock()
            torch.mm(a, b)
            if device.type == "cuda":
                torch.cuda.synchronize()
            times.append(clock() - start)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    return 2 * n ** 3 / statistics.median(times) / 1e12
