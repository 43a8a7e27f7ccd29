"""fc not replaced: everything frozen and ImageNet's fc unfrozen, so the model still has 1000 outputs."""
# replaces: build_finetune_model
# caught by: test_build_finetune_model, test_build_finetune_model_hidden


def build_finetune_model(num_classes, weights=None):
    model = torchvision.models.resnet18(weights=weights)
    for parameter in model.parameters():
        parameter.requires_grad = False
    for parameter in model.fc.parameters():
        parameter.requires_grad = True
    return model
