"""The retail domain: orders, returns, exchanges and account changes of an online store."""

from benchmarks.taubench.domains.retail.data_model import RetailDB
from benchmarks.taubench.domains.retail.tools import RetailTools

__all__ = ["RetailDB", "RetailTools"]
