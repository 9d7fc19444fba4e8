"""The presets: how pads, the terrace heightfield and walls are made.

``reference`` is the method as the reference asset does it (in :mod:`terrace_foundation.pipeline`
and :mod:`terrace_foundation.terrain`); ``grading`` (flat pads, retaining walls, slope-limited
embankments) is :mod:`.grading` with its walls in :mod:`.walls`.
"""
