"""TensorPairDataset stores the transform but never applies it: __getitem__ returns the raw features."""
# replaces: TensorPairDataset
# caught by: test_TensorPairDataset, test_TensorPairDataset_hidden
class TensorPairDataset(Dataset):
    def __init__(self, features, targets, transform=None):
        self.features = features
        self.targets = targets
        self.transform = transform

    def __len__(self):
        return len(self.features)

    def __getitem__(self, index):
        return self.features[index], self.targets[index]
