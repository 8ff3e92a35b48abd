"""The version of xialpha (its own module, so that every module can name it without importing the package's API)."""

__version__ = "0.2.0"
