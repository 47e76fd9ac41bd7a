"""Families of methods defined outside the package, registered by the tests that use them."""
