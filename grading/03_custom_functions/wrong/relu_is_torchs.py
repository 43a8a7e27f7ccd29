"""relu is torch.relu: the right numbers, but not one node of the student's Function."""
# exercise: relu
# message: nodes

relu = torch.relu
