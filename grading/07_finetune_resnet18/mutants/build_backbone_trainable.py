"""Backbone left trainable: fc is replaced, but the other parameters are never frozen."""
# replaces: build_finetune_model
# caught by: test_build_finetune_model, test_build_finetune_model_hidden


def build_finetune_model(num_classes, weights=None):
    model = torchvision.models.resnet18(weights=weights)
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    return model
