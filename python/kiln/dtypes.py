"""PyTorch dtypes and their spelling in Kiln's IR (docs/Dialects/RationaleFX.md).

Kept free of torch imports so that tools without PyTorch can read signatures.
"""

# MLIR element type -> name of the torch dtype attribute.
MLIR_TO_TORCH_NAME = {
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "f64": "float64",
    "si64": "int64",
    "si32": "int32",
    "si16": "int16",
    "si8": "int8",
    "ui8": "uint8",
    "i1": "bool",
    "complex<f32>": "complex64",
    "complex<f64>": "complex128",
}


def torch_dtype(element_type: str):
    """The torch dtype that Kiln's IR spells `element_type`."""
    import torch

    try:
        return getattr(torch, MLIR_TO_TORCH_NAME[element_type])
    except KeyError:
        raise ValueError(f"no PyTorch dtype for '{element_type}'") from None


def mlir_element_types():
    """torch dtype -> MLIR element type, for every dtype Kiln supports."""
    import torch

    return {getattr(torch, name): mlir for mlir, name in MLIR_TO_TORCH_NAME.items()}
