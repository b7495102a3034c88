"""Importing ATen-level FX graphs into Kiln's ``fx`` dialect (kiln.importer).

The importer is moving into modules of this package; until then
size_inference holds all of it, and this module gives its names.
"""

from kiln.importer import size_inference as _importer

globals().update({name: value for name, value in vars(_importer).items()
                  if not name.startswith("__")})
__all__ = _importer.__all__
del _importer
