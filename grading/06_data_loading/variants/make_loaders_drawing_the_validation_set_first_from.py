"""make_loaders drawing the validation set first from a permutation, not random_split."""
# exercise: make_loaders

def make_loaders(dataset, batch_size, val_fraction, seed):
    from torch.utils.data import Subset
    order = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed)).tolist()
    n_val = int(val_fraction * len(dataset))
    val_set, train_set = Subset(dataset, order[:n_val]), Subset(dataset, order[n_val:])
    generator = torch.Generator()
    generator.manual_seed(seed + 1)
    return (DataLoader(train_set, batch_size, shuffle=True, generator=generator),
            DataLoader(val_set, batch_size))
