"""fit evaluates on the training loader, so the 'validation' curve measures samples the model trained on."""
# replaces: fit
# caught by: test_fit, test_fit_hidden
def fit(model, train_loader, val_loader, optimizer, loss_fn, device, num_epochs):
    history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    for _ in tqdm(range(num_epochs), file=sys.stdout):
        history["train_loss"].append(train_one_epoch(model, train_loader, optimizer, loss_fn, device))
        val_loss, val_accuracy = evaluate(model, train_loader, loss_fn, device)
        history["val_loss"].append(val_loss)
        history["val_accuracy"].append(val_accuracy)
    return history
