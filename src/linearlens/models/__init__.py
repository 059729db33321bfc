"""The models: MLPs, small CNNs, the LeNet-style CNN (2-D and 1-D), ResNets (the CIFAR ResNet-20 and
ResNet-18, any stage layout, 1-D or 2-D, with or without BatchNorm) and the KBGP24 polynomial
network, each a plain nn.Module; ``zoo`` builds one from its spec and saves and loads checkpoints.
Import from the modules: this file stays empty so that a job's code inputs hold only what it uses."""
