"""fc replaced before the freezing loop, which then freezes the new head too: nothing can learn."""
# replaces: build_finetune_model
# caught by: test_build_finetune_model, test_build_finetune_model_hidden


def build_finetune_model(num_classes, weights=None):
    model = torchvision.models.resnet18(weights=weights)
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    for parameter in model.parameters():
        parameter.requires_grad = False
    return model
