"""GPU example kernels (tirx script). Each module has a ``KERNELS`` dict of builders."""
