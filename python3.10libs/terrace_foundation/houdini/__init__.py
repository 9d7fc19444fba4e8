"""Houdini front ends of Terrace Foundation.

Modules that import no ``hou`` (usable anywhere, tested without Houdini):

``network``
    The asset as data: type names, interface, inner nodes and wiring (one spec for the writer,
    the hython builder and the validator).
``write_hda``
    Writes the spec as expanded (``Contents.dir``) HDA libraries: ``python -m
    terrace_foundation.houdini.write_hda OUTDIR``.
``convert``
    Pure index arithmetic between a Houdini heightfield volume and a
    :class:`~terrace_foundation.Heightfield`.

Modules that import ``hou`` (run inside Houdini or hython only):

``sop``
    The Python SOP route: hou geometry and heightfield volumes to numpy, the engine, and back.
``build``
    Builds the assets with the hou API from the same spec and validates live networks.
"""
