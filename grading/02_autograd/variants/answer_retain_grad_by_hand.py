"""answer_retain_grad computed by hand as a float64 NumPy array: 2 (prediction - y) / N."""
# exercise: answer_retain_grad

answer_retain_grad = ((prediction - y) * 2 / len(prediction)).detach().numpy().astype(np.float64)
