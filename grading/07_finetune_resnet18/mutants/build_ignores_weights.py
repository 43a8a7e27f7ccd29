"""The weights argument is ignored: the backbone is always random, even when ImageNet weights are asked for."""
# replaces: build_finetune_model
# caught by: test_build_finetune_model_hidden


def build_finetune_model(num_classes, weights=None):
    model = torchvision.models.resnet18()
    for parameter in model.parameters():
        parameter.requires_grad = False
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    return model
