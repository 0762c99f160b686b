"""Small transformer blocks for the torch frontend's tests: a BERT-style
encoder (token + position embeddings, padding mask, GELU erf) and a
GPT-style decoder (causal attention through scaled_dot_product_attention,
GELU tanh, tied output head). Random weights, eval mode."""

import math

import torch
from torch import nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, width, heads, causal):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x, mask=None):
        b, s, w = x.shape
        q, k, v = self.qkv(x).split(w, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, w // self.heads).transpose(1, 2) for t in (q, k, v))
        if self.causal:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(w // self.heads)
            scores = scores.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
            y = scores.softmax(dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, s, w))


class Block(nn.Module):
    def __init__(self, width, heads, causal, approximate):
        super().__init__()
        self.attention = Attention(width, heads, causal)
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
        self.approximate = approximate

    def forward(self, x, mask=None):
        x = x + self.attention(self.norm1(x), mask)
        return x + self.down(F.gelu(self.up(self.norm2(x)), approximate=self.approximate))


class Stack(nn.Module):
    """Token and position embeddings, `layers` blocks, a final norm."""

    def __init__(self, causal, approximate, vocab=1000, width=64, heads=4, layers=2, seq=16):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(seq, width)
        self.blocks = nn.ModuleList(Block(width, heads, causal, approximate)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(width)

    def encode(self, ids, mask=None):
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x, mask)
        return self.norm(x)


class Encoder(Stack):
    """BERT-style: ids [N, S] int64 and a padding mask [N, S] (1 = token)."""

    def __init__(self):
        super().__init__(causal=False, approximate="none")
        self.pool = nn.Linear(64, 64)

    def forward(self, ids, mask):
        return torch.tanh(self.pool(self.encode(ids, mask)[:, 0]))


class Decoder(Stack):
    """GPT-style: ids [N, S] int64 -> next-token logits [N, S, vocab]."""

    def __init__(self):
        super().__init__(causal=True, approximate="tanh")

    def forward(self, ids):
        return self.encode(ids) @ self.tokens.weight.t()
