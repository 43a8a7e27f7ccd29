"""init_classifier by hand: normal_ with std sqrt(2 / in_features), fill_(0) for the biases, the last std scaled directly."""
# exercise: init_classifier

import math as _math


def init_classifier(model, last_scale=0.01):
    linears = [m for m in model.modules() if type(m) is nn.Linear]
    for i, layer in enumerate(linears):
        std = _math.sqrt(2.0 / layer.weight.shape[1]) * (last_scale if i == len(linears) - 1 else 1.0)
        layer.weight.data.normal_(0.0, std)
        layer.bias.data.fill_(0.0)
    return model
