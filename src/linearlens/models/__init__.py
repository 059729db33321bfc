"""The model zoo: MLPs, small CNNs and the CIFAR ResNet-20; every model is a plain nn.Module."""

from .cnn import small_cnn
from .mlp import mlp
from .resnet import resnet20

__all__ = ["mlp", "resnet20", "small_cnn"]
