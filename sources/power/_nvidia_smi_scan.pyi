# The compiled scan of sources/power/_nvidia_smi_scan.c (built by `uv sync`).
import numpy as np
import numpy.typing as npt

def scan(data: bytes | bytearray, start: int, stop: int, n_fields: int, stamp_at: int,
         index_at: int, power_at: int, micros: npt.NDArray[np.int64], index: npt.NDArray[np.int64],
         watts: npt.NDArray[np.float64], /) -> int: ...
