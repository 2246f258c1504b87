"""Input tables: specs, CSV loading and validation, importers of public price maps."""
