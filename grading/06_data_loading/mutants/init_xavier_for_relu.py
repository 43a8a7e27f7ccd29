"""init_classifier uses Xavier (Glorot) normal, made for tanh: variance 2 / (fan_in + fan_out), too small for ReLU."""
# replaces: init_classifier
# caught by: test_init_classifier, test_init_classifier_hidden
def init_classifier(model, last_scale=0.01):
    linears = [module for module in model.modules() if isinstance(module, nn.Linear)]
    with torch.no_grad():
        for layer in linears:
            nn.init.xavier_normal_(layer.weight)
            nn.init.zeros_(layer.bias)
        linears[-1].weight.mul_(last_scale)
    return model
