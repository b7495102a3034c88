import sys
from pathlib import Path

# Tests run against the source tree's package, not an installed one.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
