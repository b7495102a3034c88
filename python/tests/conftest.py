import sys
from pathlib import Path

import pytest

# Tests run against the source tree's package, not an installed one.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

try:
    import torch
except ImportError:  # The tests that need torch skip themselves.
    torch = None

if torch is not None:
    import kiln.runtime

    # Every result an artifact allocates starts poisoned (NaN, -77, True),
    # so that a test sees elements that a kernel leaves unwritten.
    kiln.runtime.poison_results = True


@pytest.fixture(autouse=True)
def exact_float32_references():
    """Eager references in f32, not TF32: cuDNN's convolutions and recurrent
    layers round their products to TF32 by default, by more than the f32
    tolerances allow, while Kiln's f32 is f32 throughout."""
    if torch is None:
        yield
        return
    saved = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32 = saved
