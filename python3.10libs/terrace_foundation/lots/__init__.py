"""The vector stages: from a region to its lots.

:mod:`.scatter` (seeded points, Lloyd relaxation) -> :mod:`.fracture` (Voronoi pieces clipped
to the region) -> :mod:`.subdivide` (split pieces larger than the minimum lot size) ->
:mod:`.footprint` (each lot's outline) -> :mod:`.remesh` (slice triangles of about the remesh
size).
"""
