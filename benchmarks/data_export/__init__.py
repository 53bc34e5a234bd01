"""`gecko data export`: training data (SFT, self-correction, DPO pairs) from run directories and environment
rollouts, filtered, verified and flagged for contamination. See README.md beside this file."""

from benchmarks.data_export.export import EmptyExportError, ExportOptions, run_export
from benchmarks.data_export.filters import FilterOptions

__all__ = ["EmptyExportError", "ExportOptions", "FilterOptions", "run_export"]
