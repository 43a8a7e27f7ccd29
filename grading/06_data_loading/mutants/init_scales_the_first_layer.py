"""init_classifier scales the first Linear by last_scale instead of the last one."""
# replaces: init_classifier
# caught by: test_init_classifier, test_init_classifier_hidden
def init_classifier(model, last_scale=0.01):
    linears = [module for module in model.modules() if isinstance(module, nn.Linear)]
    with torch.no_grad():
        for layer in linears:
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            nn.init.zeros_(layer.bias)
        linears[0].weight.mul_(last_scale)
    return model
