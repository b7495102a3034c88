#!/usr/bin/env python3
"""Generates the fx dialect's Core ATen ops from utils/fx_op_table.py.

    utils/gen-fx-ops.py            write include/kiln/Dialect/FX/IR/FXAtenOps.td
                                   and python/kiln/_fx_signatures.py
    utils/gen-fx-ops.py --check    fail if a checked-in file is out of date
    utils/gen-fx-ops.py --list     print the ATen overload -> fx op mapping

The table is validated first (unique names, known op classes and verifier
kinds, argument names that the classes' verifiers read); a bad row is an
error with the row's ATen name. Runs with /usr/bin/python3, no dependencies.
"""

import argparse
import difflib
import importlib.util
import os
import re
import signal
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "utils", "fx_op_table.py")
PYTHON_OUTPUT = os.path.join(ROOT, "python", "kiln", "_fx_signatures.py")
OUTPUT = os.path.join(ROOT, "include", "kiln", "Dialect", "FX", "IR",
                      "FXAtenOps.td")
VERIFIERS = os.path.join(ROOT, "lib", "Dialect", "FX", "IR", "FXVerifiers.h")

# Mnemonics that the hand-written ops in FXOps.td use.
RESERVED = {"graph", "output", "constant", "symbol_value"}

# The C++ enum behind each family class, whose enumerators are the kinds.
FAMILY_ENUMS = {
    "FX_ReductionOp": "ReductionKind",
    "FX_NormalizationOp": "NormalizationKind",
    "FX_LinalgOp": "LinalgKind",
    "FX_ShapeOp": "ShapeKind",
    "FX_IndexingOp": "IndexingKind",
    "FX_PoolingOp": "PoolingKind",
    "FX_CreationOp": "CreationKind",
    "FX_ElementwiseOp": "TypePromotion",
}

# Arguments that a verifier reads by name, per (class, kind).
REQUIRED_ARGS = {
    ("FX_ShapeOp", "Permute"): ["dims"],
    ("FX_ShapeOp", "Squeeze"): ["dim"],
    ("FX_ShapeOp", "Unsqueeze"): ["dim"],
    ("FX_ShapeOp", "Slice"): ["dim", "start", "end", "step"],
    ("FX_ShapeOp", "SliceScatter"): ["dim", "start", "end", "step"],
    ("FX_ShapeOp", "Select"): ["dim", "index"],
    ("FX_ShapeOp", "SelectScatter"): ["dim", "index"],
    ("FX_ShapeOp", "Cat"): ["dim"],
    ("FX_ShapeOp", "Split"): ["dim"],
    ("FX_ShapeOp", "AsStrided"): ["stride", "storage_offset"],
    ("FX_ShapeOp", "AsStridedScatter"): ["stride", "storage_offset"],
    ("FX_ShapeOp", "ConstantPad"): ["pad"],
    ("FX_ShapeOp", "Pad"): ["padding"],
    ("FX_ShapeOp", "Flip"): ["dims"],
    ("FX_ShapeOp", "Repeat"): ["repeats"],
    ("FX_ShapeOp", "Diagonal"): ["offset", "dim1", "dim2"],
    ("FX_ReductionOp", "Cumulative"): ["dim", "dtype"],
    ("FX_ReductionOp", "Sort"): ["dim"],
    ("FX_ReductionOp", "TopK"): ["k", "dim"],
    ("FX_NormalizationOp", "Softmax"): ["dim", "half_to_float"],
    ("FX_NormalizationOp", "SoftmaxBackward"): ["dim", "input_dtype"],
    ("FX_NormalizationOp", "LayerNorm"): ["normalized_shape"],
    ("FX_NormalizationOp", "LayerNormBackward"): ["normalized_shape"],
    ("FX_NormalizationOp", "GroupNorm"): ["group"],
    ("FX_NormalizationOp", "GroupNormBackward"): ["group"],
    ("FX_NormalizationOp", "BatchNormFunctional"): ["training"],
    ("FX_NormalizationOp", "BatchNormNoStats"): ["training"],
    ("FX_LinalgOp", "Convolution"): ["stride", "padding", "dilation",
                                     "transposed", "output_padding",
                                     "groups"],
    ("FX_LinalgOp", "ConvolutionBackward"): ["stride", "padding", "dilation",
                                             "transposed", "output_padding",
                                             "groups", "bias_sizes"],
    ("FX_LinalgOp", "EfficientAttention"): ["compute_log_sumexp"],
    ("FX_LinalgOp", "EfficientAttentionBackward"): ["grad_input_mask"],
    ("FX_IndexingOp", "Index"): ["index_positions"],
    ("FX_IndexingOp", "IndexPut"): ["index_positions"],
    ("FX_IndexingOp", "IndexSelect"): ["dim"],
    ("FX_IndexingOp", "Gather"): ["dim"],
    ("FX_IndexingOp", "Scatter"): ["dim"],
    ("FX_IndexingOp", "ScatterValue"): ["dim"],
    ("FX_PoolingOp", "MaxPoolWithIndices"): ["kernel_size", "stride",
                                             "padding", "dilation",
                                             "ceil_mode"],
    ("FX_PoolingOp", "MaxPoolWithIndicesBackward"): ["kernel_size", "stride",
                                                     "padding", "dilation",
                                                     "ceil_mode"],
    ("FX_PoolingOp", "AvgPool"): ["kernel_size", "stride", "padding",
                                  "ceil_mode", "divisor_override"],
    ("FX_PoolingOp", "AvgPoolBackward"): ["kernel_size", "stride", "padding",
                                          "ceil_mode", "divisor_override"],
    ("FX_PoolingOp", "Col2Im"): ["kernel_size", "dilation", "padding",
                                 "stride"],
    ("FX_LinalgOp", "Pdist"): ["p"],
    ("FX_LinalgOp", "Cdist"): ["p"],
    ("FX_LinalgOp", "FftR2C"): ["dim", "onesided"],
    ("FX_LinalgOp", "FftC2R"): ["dim", "last_dim_size"],
    ("FX_LinalgOp", "FftC2C"): ["dim"],
    ("FX_CreationOp", "Randperm"): ["dtype", "offset"],
    ("FX_PoolingOp", "UpsampleNearest"): ["scale_factors"],
    ("FX_PoolingOp", "UpsampleBilinear"): ["scale_factors"],
    ("FX_CreationOp", "Full"): ["fill_value", "dtype"],
    ("FX_CreationOp", "FullLike"): ["fill_value", "dtype"],
    ("FX_CreationOp", "Empty"): ["dtype"],
    ("FX_CreationOp", "EmptyStrided"): ["stride", "dtype"],
    ("FX_CreationOp", "Random"): ["dtype", "offset"],
    ("FX_CreationOp", "ScalarTensor"): ["s", "dtype"],
    ("FX_CreationOp", "Arange"): ["start", "end", "step", "dtype"],
    ("FX_CreationOp", "NativeDropout"): ["p", "offset"],
    ("FX_CreationOp", "Bernoulli"): ["p", "offset"],
    ("FX_ElementwiseOp", "Cast"): ["dtype"],
}

# What each class (and kind) promises, for the generated descriptions.
PROMOTION_TEXT = {
    "Default": "the promoted dtype (`torch.result_type`)",
    "IntToFloat": "the promoted dtype, or f32 (the default dtype) when that "
                  "is integral or bool",
    "AlwaysBool": "always bool (`i1`)",
    "ComplexToFloat": "the promoted dtype, or its real counterpart when that "
                      "is complex",
    "BoolToLong": "the promoted dtype, or si64 when that is bool",
    "FloatToComplex": "the complex dtype whose parts have the promoted dtype "
                      "(f32 or f64)",
}
FAMILY_TEXT = {
    "FX_ReductionOp": "Reductions remove the reduced dimensions (or keep "
                      "them as 1 with `keepdim`); negative dimensions count "
                      "from the end.",
    "FX_NormalizationOp": "Saved statistics have the input's dtype or its "
                          "compute dtype (f32 for f16/bf16): CPU and CUDA "
                          "kernels differ, and both are accepted.",
    "FX_LinalgOp": "Tensor operands must share one dtype, which the result "
                   "has.",
    "FX_ShapeOp": "The result keeps `self`'s dtype.",
    "FX_IndexingOp": "Index tensors are si64 or si32.",
    "FX_PoolingOp": "The window slides over the trailing spatial "
                    "dimensions of a batched or unbatched input.",
    "FX_CreationOp": "The result type gives the shape; the dtype is "
                     "`dtype` or ATen's default. `size_symbols`, where the "
                     "op has it, names the graph's size symbol of each `?` "
                     "of the result.",
}

# Kinds of a family that the family's text does not describe.
KIND_TEXT = {
    ("FX_CreationOp", "Bernoulli"): "The result has `self`'s type.",
    ("FX_CreationOp", "NativeDropout"): "The output has the input's type; "
                                        "the mask its shape, in bool.",
}


def fail(message):
    sys.stderr.write(f"gen-fx-ops: error: {message}\n")
    sys.exit(2)


def load_table():
    # Leave no __pycache__ behind in utils/.
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location("fx_op_table", TABLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    examples = getattr(module, "EXAMPLES", {})
    mnemonics = {row["mnemonic"] for row in module.OPS}
    for name in examples:
        if name not in mnemonics:
            fail(f"EXAMPLES names '{name}', which is no op of the table")
    folders = set(getattr(module, "FOLDERS", []))
    for name in folders - mnemonics:
        fail(f"FOLDERS names '{name}', which is no op of the table")
    for row in module.OPS:
        row["example"] = examples.get(row["mnemonic"], "")
        row["folder"] = row["mnemonic"] in folders
    return module.OPS


def read_enums():
    """The enumerators of each C++ kind enum in FXVerifiers.h."""
    with open(VERIFIERS) as f:
        text = f.read()
    enums = {}
    for match in re.finditer(r"enum class (\w+) \{(.*?)\};", text, re.S):
        body = re.sub(r"//[^\n]*", "", match.group(2))
        enums[match.group(1)] = [e.strip() for e in body.split(",")
                                 if e.strip()]
    return enums


def cpp_class_name(mnemonic):
    return "".join(part[:1].upper() + part[1:]
                   for part in mnemonic.split("_")) + "Op"


def is_variable(ods_type):
    return ods_type.startswith(("Optional<", "Variadic<"))


def validate(ops, enums):
    seen_aten, seen_mnemonic, seen_class = {}, {}, {}
    for row in ops:
        aten, mnemonic = row["aten"], row["mnemonic"]
        where = f"row {aten}"
        if not re.fullmatch(r"aten\.\w+\.\w+", aten):
            fail(f"{where}: the ATen name must be aten.<name>.<overload>")
        if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", mnemonic):
            fail(f"{where}: mnemonic '{mnemonic}' is not snake_case")
        if mnemonic in RESERVED:
            fail(f"{where}: mnemonic '{mnemonic}' belongs to a hand-written op")
        cpp = cpp_class_name(mnemonic)
        for table, key, what in ((seen_aten, aten, "ATen overload"),
                                 (seen_mnemonic, mnemonic, "mnemonic"),
                                 (seen_class, cpp, "C++ class")):
            if key in table:
                fail(f"{where}: {what} '{key}' already used by {table[key]}")
            table[key] = aten
        for other in row["also"]:
            if other in seen_aten:
                fail(f"{where}: also-represented {other} is already a row")
            seen_aten[other] = aten
        if not row["summary"] or row["summary"].endswith("."):
            fail(f"{where}: the summary must be one line without a final "
                 "period")

        names = [name for _, name, _ in row["args"] + row["results"]]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            fail(f"{where}: repeated argument or result names {duplicates}")
        operands = [a for a in row["args"] if a[0] == "operand"]
        attrs = {a[1] for a in row["args"] if a[0] == "attribute"}
        cls, params = row["class"]

        if cls == "FX_SameTypeUnaryOp":
            if ([a[1] for a in operands] != ["self"] or
                    [r[1] for r in row["results"]] != ["result"] or
                    operands[0][2] != row["results"][0][2]):
                fail(f"{where}: a same-type unary op has operand `self` and "
                     "result `result` of one type constraint")
            continue
        if cls not in FAMILY_ENUMS:
            fail(f"{where}: unknown op class {cls}")
        kind = params[0].strip('"')
        enum = FAMILY_ENUMS[cls]
        if kind not in enums.get(enum, []):
            fail(f"{where}: {kind} is not a {enum} in FXVerifiers.h")
        for name in REQUIRED_ARGS.get((cls, kind), []):
            if name not in attrs:
                fail(f"{where}: the {kind} verifier reads attribute `{name}`")
        if cls == "FX_ElementwiseOp":
            promoted, scalars, coefficients = params[1], params[2], params[3]
            for name in scalars + coefficients:
                if name not in attrs:
                    fail(f"{where}: `{name}` is not an attribute")
            if promoted and (any(is_variable(a[2]) for a in operands) or
                             max(promoted) >= len(operands)):
                fail(f"{where}: promoted operand indices need fixed operands")
        if not row["results"]:
            fail(f"{where}: an op has results")


def tablegen_value(value):
    if isinstance(value, list):
        return "[" + ", ".join(tablegen_value(v) for v in value) + "]"
    if isinstance(value, str) and not value.startswith('"'):
        return f'"{value}"'
    return str(value)


def class_arguments(row, traits):
    cls, params = row["class"]
    args = [f'"{row["mnemonic"]}"', f'"{row["aten"]}"']
    if cls == "FX_SameTypeUnaryOp":
        return args
    if cls == "FX_ElementwiseOp":
        defaults = [None, [], [], [], 0]
        values = list(params)
        if traits:
            values.append(None)  # Placeholder: traits follow all parameters.
        else:
            while len(values) > 1 and values[-1] == defaults[len(values) - 1]:
                values.pop()
        args += [tablegen_value(v) for v in values if v is not None]
    else:
        args += [tablegen_value(v) for v in params]
    if traits:
        args.append("[" + ", ".join(traits) + "]")
    return args


def assembly_format(row):
    """A format with `name(%v)` groups for optional operands, or None to keep
    the class's `operands` format."""
    operands = [a for a in row["args"] if a[0] == "operand"]
    if not any(a[2].startswith("Optional<") for a in operands):
        return None
    parts, positional = [], False
    for _, name, ods in operands:
        if ods.startswith("Optional<"):
            parts.append(f"(`{name}` `(` ${name}^ `)`)?")
            continue
        if positional:
            parts.append("`,`")
        parts.append(f"${name}")
        positional = True
    parts.append("attr-dict `:` functional-type(operands, results)")
    return " ".join(parts)


def description(row):
    cls, params = row["class"]
    paragraphs = [f"Core ATen `{row['aten']}`."]
    if row["also"]:
        paragraphs.append("Also represents " + "; ".join(
            f"`{aten}` ({how})" for aten, how in row["also"].items()) + ".")
    if row["notes"]:
        paragraphs.append(row["notes"])
    if cls == "FX_SameTypeUnaryOp":
        paragraphs.append("The result has the operand's type.")
    elif cls == "FX_ElementwiseOp":
        kind, promoted, scalars = params[0].strip('"'), params[1], params[2]
        text = "The tensor operands broadcast to the result's shape."
        if kind == "Cast":
            text += " The result's dtype is `dtype`, or the operand's."
        else:
            operands = [a[1] for a in row["args"] if a[0] == "operand"]
            inputs = [f"`{operands[i]}`" for i in promoted] or [
                "the tensor operands"]
            inputs += [f"the scalar `{s}` (a wrapped number)"
                       for s in scalars]
            listed = ", ".join(inputs[:-1]) + (
                " and " if len(inputs) > 1 else "") + inputs[-1]
            text += (f" Type promotion over {listed} gives the result's "
                     f"dtype: {PROMOTION_TEXT[kind]}.")
        paragraphs.append(text)
    else:
        kind = row["class"][1][0].strip('"') if row["class"][1] else None
        paragraphs.append(KIND_TEXT.get((cls, kind), FAMILY_TEXT[cls]))
    wrapped = []
    for paragraph in paragraphs:
        wrapped.append(textwrap.fill(paragraph, width=76,
                                     initial_indent="    ",
                                     subsequent_indent="    ",
                                     break_on_hyphens=False))
    if row["example"]:
        example = textwrap.indent(row["example"], "    ")
        wrapped.append(f"    ```mlir\n{example}\n    ```")
    return "\n\n".join(wrapped)


def generate(ops):
    out = [
        "//===- FXAtenOps.td - fx ops for Core ATen (generated) "
        "-----*- tablegen -*-===//",
        "//",
        "// GENERATED FILE, DO NOT EDIT. Generated by utils/gen-fx-ops.py "
        "from",
        "// utils/fx_op_table.py; edit the table, then regenerate with",
        "//",
        "//   /usr/bin/python3 utils/gen-fx-ops.py",
        "//",
        "// `utils/gen-fx-ops.py --check` fails when this file is out of "
        "date.",
        "//",
        "//===---------------------------------------------------------"
        "-------------===//",
        "",
        "#ifndef KILN_DIALECT_FX_IR_FXATENOPS_TD",
        "#define KILN_DIALECT_FX_IR_FXATENOPS_TD",
        "",
        'include "kiln/Dialect/FX/IR/FXOpBase.td"',
        "",
    ]
    for row in ops:
        cls, _ = row["class"]
        operands = [a for a in row["args"] if a[0] == "operand"]
        traits = []
        if sum(is_variable(a[2]) for a in operands) > 1:
            traits.append("AttrSizedOperandSegments")
        args = class_arguments(row, traits)
        out.append(wrap_list(
            f"def FX_{cpp_class_name(row['mnemonic'])} : {cls}<", args,
            "> {", "    "))
        summary = row["summary"].replace('"', '\\"')
        out.append(f'  let summary = "{summary}";')
        out.append("  let description = [{")
        out.append(description(row))
        out.append("  }];")
        ins = [f"{ods}:${name}" for _, name, ods in row["args"]]
        outs = [f"{ods}:${name}" for _, name, ods in row["results"]]
        out.append(wrap_dag("  let arguments = (ins ", ins, ");"))
        out.append(wrap_dag("  let results = (outs ", outs, ");"))
        if row["folder"]:
            out.append("  let hasFolder = 1;")
        fmt = assembly_format(row)
        if fmt:
            out.append("  let assemblyFormat = [{")
            out.append(textwrap.fill(fmt, width=76, initial_indent="    ",
                                     subsequent_indent="    ",
                                     break_on_hyphens=False))
            out.append("  }];")
        out.append("}")
        out.append("")
    out.append("#endif // KILN_DIALECT_FX_IR_FXATENOPS_TD")
    return "\n".join(out) + "\n"


def wrap_list(prefix, items, suffix, indent):
    """`prefix` + comma-separated `items` + `suffix`, broken after commas to
    fit 80 columns, continuation lines indented by `indent`."""
    lines, current = [], prefix
    for i, item in enumerate(items):
        piece = item + ("," if i + 1 < len(items) else suffix)
        separator = "" if current.endswith(("<", "(", " ")) else " "
        if len(current) + len(separator) + len(piece) > 80 and \
                current != indent:
            lines.append(current.rstrip())
            current, separator = indent, ""
        current += separator + piece
    lines.append(current)
    return "\n".join(lines)


def wrap_dag(prefix, items, suffix):
    """`prefix items suffix`, broken after commas to fit 80 columns."""
    return wrap_list(prefix, items, suffix, " " * len(prefix))


def generate_python(ops):
    """The importer's view of the table: for each ATen overload (rows and the
    overloads they also represent), the fx op and its arguments."""
    lines = [
        '"""fx ops by ATen overload, for the importer. GENERATED FILE, DO NOT',
        "EDIT: generated by utils/gen-fx-ops.py from utils/fx_op_table.py.",
        "",
        "Each entry: (mnemonic, same_type_unary, arguments, results), where an",
        "argument is (kind, name, ODS type) with kind 'operand' or 'attribute'",
        "and a result is (name, ODS type).",
        '"""',
        "",
        "OPS = {",
    ]
    for row in ops:
        same_type = row["class"][0] == "FX_SameTypeUnaryOp"
        args = [(kind, name, ods) for kind, name, ods in row["args"]]
        results = [(name, ods) for _, name, ods in row["results"]]
        entry = (row["mnemonic"], same_type, args, results)
        for aten in [row["aten"], *row["also"]]:
            lines.append(f"    {aten!r}: {entry!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if FXAtenOps.td differs from the table")
    parser.add_argument("--list", action="store_true",
                        help="print the ATen overload -> fx op mapping")
    parser.add_argument("-o", "--output", default=OUTPUT,
                        help="where to write (default: %(default)s)")
    options = parser.parse_args()
    # Let `--list | head` end quietly.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    ops = load_table()
    validate(ops, read_enums())
    if options.list:
        for row in ops:
            print(f"{row['aten']:64} fx.{row['mnemonic']}")
            for aten, how in row["also"].items():
                print(f"{aten:64} fx.{row['mnemonic']} ({how})")
        return 0
    outputs = [(options.output, generate(ops)),
               (PYTHON_OUTPUT, generate_python(ops))]
    status = 0
    for path, text in outputs:
        relative = os.path.relpath(path, ROOT)
        if not options.check:
            with open(path, "w") as f:
                f.write(text)
            print(f"gen-fx-ops: wrote {relative} ({len(ops)} ops)")
            continue
        try:
            with open(path) as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        if current == text:
            print(f"gen-fx-ops: {relative} is up to date ({len(ops)} ops)")
            continue
        diff = list(difflib.unified_diff(
            current.splitlines(), text.splitlines(), f"{relative} (checked in)",
            f"{relative} (from utils/fx_op_table.py)", lineterm="", n=1))
        sys.stderr.write(
            f"gen-fx-ops: {relative} is out of date with utils/fx_op_table.py "
            "(or was edited by hand).\n"
            "Regenerate it with: /usr/bin/python3 utils/gen-fx-ops.py\n")
        sys.stderr.write("\n".join(diff[:60]) + "\n")
        if len(diff) > 60:
            sys.stderr.write(f"... ({len(diff) - 60} more diff lines)\n")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
