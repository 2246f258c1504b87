"""Tests of econ.fits (a package so that test_fast_mode.py can mirror econ/fits/fast_mode.py next to
tests/physics/test_fast_mode.py)."""
