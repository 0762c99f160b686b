"""Dense-prediction models for the PyTorch frontend's tests: a small
UNet-style network over the ops segmentation and generative models use
(group and instance normalisation, transposed convolutions, nearest and
bilinear upsampling, reflect / replicate / constant pads, ELU, softplus, a
running sum), and torchvision's LR-ASPP head returning its "out" map."""

import torch
import torch.nn.functional as F
from torch import nn


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.ELU())
        self.down2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1),
                                   nn.InstanceNorm2d(16, affine=True), nn.LeakyReLU(0.1))
        self.bottom = nn.Conv2d(16, 16, 3, padding=0)
        # stride 2 with output_padding, groups and dilation; then a plain 2x2.
        self.up1 = nn.ConvTranspose2d(16, 16, 3, stride=2, padding=1, output_padding=1,
                                      groups=2, dilation=1)
        self.up2 = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.head = nn.Conv2d(16, 2, 1)

    def forward(self, x):
        a = self.down1(x)                                          # [N, 8, 32, 32]
        b = self.down2(F.max_pool2d(a, 2))                         # [N, 16, 16, 16]
        c = self.bottom(F.pad(b, (1, 1, 1, 1), mode="reflect"))   # [N, 16, 16, 16]
        c = F.pad(c, (0, 0, 0, 0))
        u = self.up2(self.up1(F.max_pool2d(c, 2)))                 # [N, 8, 32, 32]
        y = self.head(torch.cat([a, u], 1))                        # [N, 2, 32, 32]
        near = F.interpolate(y, scale_factor=2, mode="nearest")
        smooth = F.interpolate(y, size=(64, 64), mode="bilinear", align_corners=False)
        corners = F.interpolate(y, size=(48, 80), mode="bilinear", align_corners=True)
        corners = F.interpolate(corners, size=(64, 64), mode="nearest")
        z = F.pad(near + smooth + corners, (1, 2, 3, 0), mode="replicate")
        z = F.pad(z, (1, 1, 0, 0), value=0.5)
        return F.softplus(z) + torch.cumsum(z, 3) * 0.01


class LRASPP(nn.Module):
    """torchvision's lraspp_mobilenet_v3_large (random weights), its "out"."""

    def __init__(self):
        super().__init__()
        import torchvision
        self.model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(
            weights=None, weights_backbone=None)

    def forward(self, x):
        return self.model(x)["out"]
