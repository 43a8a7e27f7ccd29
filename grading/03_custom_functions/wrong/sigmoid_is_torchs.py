"""sigmoid is torch.sigmoid: the right numbers, but not one node of the student's Function."""
# exercise: sigmoid
# message: nodes

sigmoid = torch.sigmoid
