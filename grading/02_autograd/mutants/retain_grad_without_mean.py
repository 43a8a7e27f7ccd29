"""The retained gradient written without the 1/N of the mean: 2 * (prediction - y)."""
# replaces: answer_retain_grad
# caught by: test_answer_retain_grad
answer_retain_grad = 2 * (prediction - y).detach()
