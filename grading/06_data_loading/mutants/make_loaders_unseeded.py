"""make_loaders splits and shuffles with the global random generator: the split changes with whatever ran before."""
# replaces: make_loaders
# caught by: test_make_loaders, test_make_loaders_hidden
def make_loaders(dataset, batch_size, val_fraction, seed):
    n_val = int(val_fraction * len(dataset))
    train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val])
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=batch_size)
    return train_loader, val_loader
