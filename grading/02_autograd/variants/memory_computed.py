"""answer_memory computed rather than written: np.shares_memory's NumPy booleans and data_ptr comparisons."""
# exercise: answer_memory
t_check, a_check = torch.arange(12.0).reshape(3, 4), np.arange(6.0)
answer_memory = {
    "view": t_check.view(4, 3).data_ptr() == t_check.data_ptr(),
    "transpose": t_check.T.data_ptr() == t_check.data_ptr(),
    "reshape_of_transpose": t_check.T.reshape(12).data_ptr() == t_check.data_ptr(),
    "contiguous_of_transpose": t_check.T.contiguous().data_ptr() == t_check.data_ptr(),
    "from_numpy": np.shares_memory(torch.from_numpy(a_check).numpy(), a_check),
    "torch_tensor": np.shares_memory(torch.tensor(a_check).numpy(), a_check),
    "float_of_from_numpy": np.shares_memory(torch.from_numpy(a_check).float().numpy(), a_check),
}
