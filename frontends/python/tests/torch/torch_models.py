"""Models written as torch users write them, shared by the tests (against eager) and by
bench/run_torch_benchmark.py (against eager and Inductor)."""
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    """ResNet's basic block: conv-bn-relu, conv-bn, identity shortcut, relu."""

    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


def blur_x_blur_y(img):
    """The seed's blur written in torch: 3-point box filters along x, then y."""
    bx = (img[..., :-2] + img[..., 1:-1] + img[..., 2:]) / 3
    return (bx[..., :-2, :] + bx[..., 1:-1, :] + bx[..., 2:, :]) / 3
