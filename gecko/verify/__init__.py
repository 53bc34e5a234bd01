"""`gecko verify`: tool-call dataset verification by replay in Gecko sessions.

`samples` reads the formats, `replay` runs one sample in a fresh session and judges it, `summary` counts,
`run` streams a file through worker processes (resume, `--keep`), `perturb` makes seeded faulty copies of
valid samples, `cli` is the command. README.md next to this file has the details.
"""

from gecko.verify.perturb import PERTURBATIONS, perturb_sample
from gecko.verify.replay import VERDICTS, Verifier
from gecko.verify.run import VerifyError, VerifyOptions, verify_dataset
from gecko.verify.samples import FORMATS, Sample, ToolCall, detect_format, read_sample
from gecko.verify.summary import Summary

__all__ = [
    "FORMATS", "PERTURBATIONS", "VERDICTS", "Sample", "Summary", "ToolCall", "Verifier", "VerifyError",
    "VerifyOptions", "detect_format", "perturb_sample", "read_sample", "verify_dataset",
]
