"""Issue #33's attention grid, one list for ``bench_library.py --only attn`` and the tile sweep
(``attn_tile_sweep.py`` takes the shapes the last grid run measured below SDPA). A module of its
own so that the sweep's ``--check`` imports it without torch."""

from __future__ import annotations

#: (B, H, S, D, causal): batch 1-16, heads 8-64, sequence 128-16k (some no tile multiple), head
#: dim 64 / 128 / 256, causal or not
GRID = [
    (1, 8, 1024, 128, False),
    (8, 8, 1024, 64, False),
    (16, 16, 512, 64, True),
    (2, 32, 2048, 128, False),
    (16, 8, 128, 64, False),
    (16, 8, 128, 128, True),
    (4, 16, 1000, 128, True),
    (4, 16, 1000, 64, False),
    (1, 64, 4096, 128, True),
    (1, 32, 4096, 64, False),
    (2, 16, 3000, 128, False),
    (8, 16, 2048, 128, True),
    (1, 16, 8192, 128, True),
    (1, 8, 16384, 128, False),
    (1, 8, 16384, 64, True),
    (4, 32, 1536, 64, True),
    (4, 16, 2048, 256, False),
    (2, 16, 4096, 256, True),
    (8, 8, 1000, 256, True),
]

#: the grid's shapes below SDPA on the last H100 run (twenty-sixth session, 19:23 UTC), the sweep's
BELOW_SDPA = [GRID[i] for i in (5, 2, 3, 4, 1, 15, 9, 16, 17, 18, 0)]
