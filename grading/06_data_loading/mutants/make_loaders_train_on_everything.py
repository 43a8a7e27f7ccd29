"""make_loaders builds the training loader on the whole dataset, so the validation samples are trained on too."""
# replaces: make_loaders
# caught by: test_make_loaders, test_make_loaders_hidden
def make_loaders(dataset, batch_size, val_fraction, seed):
    n_val = int(val_fraction * len(dataset))
    _, val_set = random_split(dataset, [len(dataset) - n_val, n_val],
                              generator=torch.Generator().manual_seed(seed))
    train_loader = DataLoader(dataset, batch_size=batch_size, shuffle=True,
                              generator=torch.Generator().manual_seed(seed))
    val_loader = DataLoader(val_set, batch_size=batch_size)
    return train_loader, val_loader
