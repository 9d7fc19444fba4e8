"""The raster stages: from lots on the terrain to the terrace heightfield.

:mod:`.heights` (vertex and pad heights of the slices) -> :mod:`.project` (slices onto the
grid) -> :mod:`.blend` (the blurred difference added back to the terrain). :mod:`.kernels` holds
the grid kernels every stage and preset shares (slopes, neighbour pairs, cone envelopes).
"""
