"""econ: LLM serving and training economics from public prices, hardware and architectures."""

__version__ = "0.1.0"
