from helpers.checks import summary

summary({"softplus": 3})
