"""Declared sweeps (``econ sweep SPEC``): a TOML spec, evaluated partition by partition, written as Hive Parquet.

- :mod:`econ.sweep.spec`: the spec file, read and checked (errors name the file, the key and the fix);
- :mod:`econ.sweep.plan`: the spec resolved against the built database into partitions (model × chip × format ×
  draw block), each a self-contained task of arrays;
- :mod:`econ.sweep.partition`: the partition function (pure: arrays in, Parquet bytes out; it knows no backend,
  no path and no database);
- :mod:`econ.sweep.backends`: local processes (default) or Ray tasks running that function;
- :mod:`econ.sweep.store`: the output folder (marker, lock, manifest, the log of finished partitions, staging);
- :mod:`econ.sweep.run`: plan, skip what is finished, run the rest, record it.
"""
