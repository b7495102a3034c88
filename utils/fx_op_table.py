"""The table of Kiln's `fx` ops for Core ATen: one row per ATen overload.

`utils/gen-fx-ops.py` turns this table into
`include/kiln/Dialect/FX/IR/FXAtenOps.td`. Each row names

- the ATen overload (`aten.add.Tensor`) and the fx mnemonic (`add`): ATen's
  name without a leading underscore, with the overload as a suffix only where
  the table (or ATen) has another overload of that name (`add_scalar`,
  `max_dim`);
- the op class (FXOpBase.td), which fixes traits, assembly format and verifier;
- the arguments in ATen's order: tensor operands with their ODS type
  constraints (FXBase.td), and scalar arguments as attributes with their ODS
  attribute types;
- the results and a one-line summary.

Arguments that fx does not keep, per docs/Dialects/RationaleFX.md: sizes that
the result type restates (`view`'s `size`, `full`'s `size`, `split_sizes`,
`output_size`, group norm's `N, C, HxW`, `num_weights`), and `layout`,
`device`, `pin_memory`, `memory_format`, `non_blocking` and `generator`.
Random ops take a `seed` operand (drawn at run time, so that each call
samples anew) and an `offset` attribute (which stream of that seed) instead.

This file is data: it imports nothing. Edit it, then run
`/usr/bin/python3 utils/gen-fx-ops.py`.
"""

# ---------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------

# Tensor type constraints (FXBase.td).
ANY = "FX_Tensor"
REAL = "FX_RealTensor"  # integer or floating
NUMERIC = "FX_NumericTensor"  # integer, floating or complex
NONCOMPLEX = "FX_NonComplexTensor"  # bool, integer or floating
INTBOOL = "FX_IntegerOrBoolTensor"
FLOAT = "FX_FloatTensor"
FLOATCOMPLEX = "FX_FloatOrComplexTensor"
COMPLEX = "FX_ComplexTensor"
BOOL = "FX_BoolTensor"
INDEX = "FX_IndexTensor"  # si64 or si32
INDEX_OR_MASK = "FX_IndexOrMaskTensor"
SEED_TENSOR = "FX_SeedTensor"  # a zero-dim si64 tensor

# Attribute types (ODS).
I64 = "I64Attr"
F64 = "F64Attr"
BOOLATTR = "BoolAttr"
I64S = "DenseI64ArrayAttr"
F64S = "DenseF64ArrayAttr"
BOOLS = "DenseBoolArrayAttr"
SCALAR = "FX_ScalarAttr"  # a PyTorch Scalar: bool, i64 or f64
DTYPE = "FX_DtypeAttr"  # a PyTorch ScalarType
# fx.add's and fx.sub's alpha, as the first fx ops defined it.
ALPHA = "AnyAttrOf<[F64Attr, I64Attr]>"
MASK3 = "FX_OutputMaskAttr"  # bool[3] output_mask
GELU_APPROXIMATION = "FX_GeluApproximationAttr"  # "none" or "tanh"
ROUNDING_MODE = "FX_RoundingModeAttr"  # "trunc" or "floor"
SCATTER_REDUCE = "FX_ScatterReduceAttr"  # "sum", "prod", "mean", ...


def pad_list(count):
    """An int[count] padding list."""
    return f"FX_PaddingAttr<{count}>"


# Arguments and results. Each is (kind, name, ODS type).
def tensor(name, constraint=ANY):
    return ("operand", name, constraint)


def optional_tensor(name, constraint=ANY):
    return ("operand", name, f"Optional<{constraint}>")


def tensor_list(name, constraint=ANY):
    return ("operand", name, f"Variadic<{constraint}>")


def symbolic_int(name):
    """An optional i64 operand: the run-time value of a symbolic integer
    argument (computed from the graph's size symbols, `fx.symbol_value`),
    which the op takes instead of the static attribute of that argument."""
    return ("operand", name, "Optional<I64>")


def attr(name, ods):
    return ("attribute", name, ods)


def optional(name, ods):
    """An attribute that ATen lets be None (or whose absence means ATen's
    default, noted in the summary)."""
    return ("attribute", name, f"OptionalAttr<{ods}>")


def default(name, ods, value):
    """An attribute with ATen's default `value` (a C++ expression)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return ("attribute", name, f'DefaultValuedAttr<{ods}, "{escaped}">')


def result(name="result", constraint=ANY):
    return ("result", name, constraint)


def result_list(name, constraint=ANY):
    return ("result", name, f"Variadic<{constraint}>")


# The graph's size symbol of each `?` of the result, for ops whose sizes the
# result type states (views, creation ops), where the type alone does not
# say which run-time size a `?` is.
SIZE_SYMBOLS = optional("size_symbols", "StrArrayAttr")

# Random ops: a run-time seed and a stream offset instead of a generator.
SEED = [tensor("seed", SEED_TENSOR), attr("offset", I64)]


# Op classes (FXOpBase.td). Each is (class name, template arguments).
def same_type_unary():
    return ("FX_SameTypeUnaryOp", [])


def elementwise(promotion, promoted=(), scalars=(), coefficients=(),
                reject_bool=False):
    return ("FX_ElementwiseOp",
            [f'"{promotion}"', list(promoted), list(scalars),
             list(coefficients), int(reject_bool)])


def reduction(kind):
    return ("FX_ReductionOp", [f'"{kind}"'])


def normalization(kind):
    return ("FX_NormalizationOp", [f'"{kind}"'])


def linalg(kind):
    return ("FX_LinalgOp", [f'"{kind}"'])


def shape(kind):
    return ("FX_ShapeOp", [f'"{kind}"'])


def indexing(kind):
    return ("FX_IndexingOp", [f'"{kind}"'])


def pooling(kind, spatial_rank):
    return ("FX_PoolingOp", [f'"{kind}"', spatial_rank])


UPSAMPLING_NOTES = (
    "ATen's `output_size` is the result's trailing sizes; `scale_factors`, "
    "when given, also sets the sampling ratio. A dynamic size without a "
    "scale factor (an output size that another tensor's sizes give) is the "
    "one that `size_symbols` names.")


def nearest_upsampling(rank, shape):
    """upsample_nearest{rank}d: the input position of each output position
    is the floor of its scaled coordinate."""
    return op(f"aten.upsample_nearest{rank}d.vec", f"upsample_nearest{rank}d",
              pooling("UpsampleNearest", rank),
              [tensor("input", NONCOMPLEX), optional("scale_factors", F64S), SIZE_SYMBOLS],
              [result("result", NONCOMPLEX)],
              f"Nearest-neighbour resampling of {shape} to the result's size",
              notes=UPSAMPLING_NOTES)


def interpolating_upsampling(name, kind, rank, summary):
    """upsample_{name}: blends the neighbours of each output position's
    scaled coordinate."""
    return op(f"aten.upsample_{name}.vec", f"upsample_{name}",
              pooling(kind, rank),
              [tensor("input", FLOAT), attr("align_corners", BOOLATTR),
               optional("scale_factors", F64S), SIZE_SYMBOLS], [result("result", FLOAT)],
              f"{summary} to the result's size",
              notes=UPSAMPLING_NOTES)


def creation(kind):
    return ("FX_CreationOp", [f'"{kind}"'])


def op(aten, mnemonic, cls, args, results, summary, notes="", also=None):
    """A row. `also` maps other ATen overloads that this op represents to how
    their arguments map (for the importer and the docs)."""
    return {"aten": aten, "mnemonic": mnemonic, "class": cls, "args": args,
            "results": results, "summary": summary, "notes": notes,
            "also": also or {}}


def unary(aten, mnemonic, constraint, summary, args=(), notes=""):
    """A same-type unary op on `self`."""
    return op(aten, mnemonic, same_type_unary(),
              [tensor("self", constraint), *args],
              [result("result", constraint)], summary, notes)


def int_to_float(aten, mnemonic, summary, constraint=ANY):
    """A unary math op whose integral inputs compute in f32."""
    return op(aten, mnemonic, elementwise("IntToFloat"),
              [tensor("self", constraint)], [result("result", FLOATCOMPLEX)],
              summary)


def binary(aten, mnemonic, promotion, constraint, summary, result_type=None,
           args=(), coefficients=(), reject_bool=False, other="other"):
    """A broadcasting binary op on tensors `self` and `other`."""
    return op(aten, mnemonic,
              elementwise(promotion, coefficients=coefficients,
                          reject_bool=reject_bool),
              [tensor("self", constraint), tensor(other, constraint), *args],
              [result("result", result_type or constraint)], summary)


def binary_scalar(aten, mnemonic, promotion, constraint, summary,
                  result_type=None, args=(), coefficients=(),
                  reject_bool=False, other="other"):
    """A binary op on tensor `self` and a Scalar attribute `other`."""
    return op(aten, mnemonic,
              elementwise(promotion, scalars=[other],
                          coefficients=coefficients, reject_bool=reject_bool),
              [tensor("self", constraint), attr(other, SCALAR), *args],
              [result("result", result_type or constraint)], summary)


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------

OPS = [
    # -- Elementwise unary, same type -------------------------------------
    unary("aten.neg.default", "neg", NUMERIC, "Elementwise `-self`",
          notes="Not defined for bool tensors."),
    unary("aten.relu.default", "relu", REAL, "Elementwise `max(self, 0)`",
          notes="Not defined for bool or complex tensors."),
    unary("aten.sign.default", "sign", NONCOMPLEX,
          "Elementwise sign: -1, 0 or 1"),
    unary("aten.floor.default", "floor", NONCOMPLEX, "Elementwise floor",
          notes="The identity on integral tensors."),
    unary("aten.ceil.default", "ceil", NONCOMPLEX, "Elementwise ceiling",
          notes="The identity on integral tensors."),
    unary("aten.round.default", "round", NONCOMPLEX,
          "Elementwise rounding, half to even",
          notes="The identity on integral tensors."),
    unary("aten.trunc.default", "trunc", NONCOMPLEX,
          "Elementwise rounding towards zero",
          notes="The identity on integral tensors."),
    unary("aten.frac.default", "frac", FLOAT,
          "Elementwise fractional part, `self - trunc(self)`"),
    unary("aten.bitwise_not.default", "bitwise_not", INTBOOL,
          "Elementwise bitwise not (logical not on bool)"),
    unary("aten.gelu.default", "gelu", FLOAT,
          "Gaussian error linear unit",
          args=[default("approximate", GELU_APPROXIMATION, '"none"')],
          notes="`approximate = \"tanh\"` uses the tanh approximation."),
    unary("aten.silu.default", "silu", FLOAT,
          "Sigmoid linear unit, `self * sigmoid(self)`"),
    unary("aten.hardsigmoid.default", "hardsigmoid", FLOAT,
          "Elementwise `clamp(self / 6 + 1 / 2, 0, 1)`"),
    unary("aten.hardswish.default", "hardswish", FLOAT,
          "Elementwise `self * hardsigmoid(self)`"),
    unary("aten.mish.default", "mish", FLOAT,
          "Elementwise `self * tanh(softplus(self))`"),
    unary("aten.elu.default", "elu", FLOAT, "Exponential linear unit",
          args=[default("alpha", F64, "1.0"), default("scale", F64, "1.0"),
                default("input_scale", F64, "1.0")]),
    unary("aten.leaky_relu.default", "leaky_relu", FLOAT,
          "Leaky rectified linear unit",
          args=[default("negative_slope", F64, "0.01")]),
    unary("aten.hardtanh.default", "hardtanh", REAL,
          "Elementwise `clamp(self, min_val, max_val)` without promotion",
          args=[default("min_val", F64, "-1.0"),
                default("max_val", F64, "1.0")]),
    unary("aten.softplus.default", "softplus", FLOAT,
          "Elementwise `log(1 + exp(beta * self)) / beta`, linear above "
          "`threshold`",
          args=[default("beta", F64, "1.0"), default("threshold", F64, "20.0")]),
    unary("aten.clone.default", "clone", ANY, "A copy of `self`",
          notes="ATen's `memory_format` only affects strides and is dropped."),
    op("aten.alias.default", "alias", same_type_unary(), [tensor("self")],
       [result()], "`self`, as a view",
       also={"aten.resolve_conj.default": "values, not conjugate bits",
             "aten.resolve_neg.default": "values, not negative bits"}),
    unary("aten.lift_fresh_copy.default", "lift_fresh_copy", ANY,
          "A copy of a constant tensor that the graph captured"),
    unary("aten.fill.Scalar", "fill_scalar", ANY,
          "A tensor like `self` filled with `value`",
          args=[attr("value", SCALAR)]),
    op("aten.bernoulli.p", "bernoulli_p", creation("Bernoulli"),
       [tensor("self", FLOAT), default("p", F64, "0.5"), *SEED],
       [result("result", FLOAT)],
       "Samples 1 with probability `p` and 0 otherwise, in `self`'s type",
       notes="Only `self`'s type matters. The samples are a function of "
       "`seed`, `offset` and the element's index."),

    # -- Elementwise unary math: integral inputs compute in f32 -----------
    int_to_float("aten.exp.default", "exp", "Elementwise `e ** self`"),
    int_to_float("aten.exp2.default", "exp2", "Elementwise `2 ** self`"),
    int_to_float("aten.expm1.default", "expm1", "Elementwise `exp(self) - 1`"),
    int_to_float("aten.log.default", "log", "Elementwise natural logarithm"),
    int_to_float("aten.log2.default", "log2", "Elementwise base-2 logarithm"),
    int_to_float("aten.log10.default", "log10",
                 "Elementwise base-10 logarithm"),
    int_to_float("aten.log1p.default", "log1p", "Elementwise `log(1 + self)`"),
    int_to_float("aten.sqrt.default", "sqrt", "Elementwise square root"),
    int_to_float("aten.rsqrt.default", "rsqrt",
                 "Elementwise reciprocal square root"),
    int_to_float("aten.sin.default", "sin", "Elementwise sine"),
    int_to_float("aten.cos.default", "cos", "Elementwise cosine"),
    int_to_float("aten.tan.default", "tan", "Elementwise tangent"),
    int_to_float("aten.asin.default", "asin", "Elementwise arcsine"),
    int_to_float("aten.acos.default", "acos", "Elementwise arccosine"),
    int_to_float("aten.atan.default", "atan", "Elementwise arctangent"),
    int_to_float("aten.sinh.default", "sinh", "Elementwise hyperbolic sine"),
    int_to_float("aten.cosh.default", "cosh", "Elementwise hyperbolic cosine"),
    int_to_float("aten.tanh.default", "tanh",
                 "Elementwise hyperbolic tangent"),
    int_to_float("aten.asinh.default", "asinh",
                 "Elementwise inverse hyperbolic sine"),
    int_to_float("aten.acosh.default", "acosh",
                 "Elementwise inverse hyperbolic cosine"),
    int_to_float("aten.atanh.default", "atanh",
                 "Elementwise inverse hyperbolic tangent"),
    int_to_float("aten.erf.default", "erf", "Elementwise error function",
                 NONCOMPLEX),
    int_to_float("aten.erfinv.default", "erfinv",
                 "Elementwise inverse error function", NONCOMPLEX),
    int_to_float("aten.erfc.default", "erfc",
                 "Elementwise complementary error function, `1 - erf(self)`",
                 NONCOMPLEX),
    int_to_float("aten.sigmoid.default", "sigmoid",
                 "Elementwise logistic sigmoid, `1 / (1 + exp(-self))`"),
    int_to_float("aten.reciprocal.default", "reciprocal",
                 "Elementwise `1 / self`"),

    # -- Elementwise unary, other dtype rules -----------------------------
    op("aten.abs.default", "abs", elementwise("ComplexToFloat"),
       [tensor("self", NUMERIC)], [result("result", NUMERIC)],
       "Elementwise absolute value",
       notes="The absolute value of a complex tensor is real."),
    op("aten.logical_not.default", "logical_not", elementwise("AlwaysBool"),
       [tensor("self")], [result("result", BOOL)],
       "Elementwise `self == 0`, as bool"),
    op("aten.isnan.default", "isnan", elementwise("AlwaysBool"),
       [tensor("self")], [result("result", BOOL)],
       "Elementwise test for NaN"),
    op("aten.isinf.default", "isinf", elementwise("AlwaysBool"),
       [tensor("self")], [result("result", BOOL)],
       "Elementwise test for infinity"),
    op("aten.clamp.default", "clamp", elementwise("Default", scalars=["min", "max"]),
       [tensor("self", REAL), optional("min", SCALAR),
        optional("max", SCALAR)], [result("result", REAL)],
       "Elementwise `min(max(self, min), max)` with scalar bounds",
       notes="The bounds take part in type promotion: a float bound on an "
       "integral tensor gives f32."),
    op("aten.clamp.Tensor", "clamp_tensor", elementwise("Default"),
       [tensor("self", REAL), optional_tensor("min", REAL),
        optional_tensor("max", REAL)], [result("result", REAL)],
       "Elementwise `min(max(self, min), max)` with broadcast tensor bounds"),
    op("aten._to_copy.default", "to_copy", elementwise("Cast"),
       [tensor("self"), optional("dtype", DTYPE)], [result()],
       "A copy of `self` converted to `dtype`",
       notes="Without `dtype` the copy keeps `self`'s dtype. ATen's layout, "
       "device, pin_memory, non_blocking and memory_format are dropped."),

    # -- Elementwise binary on tensors -------------------------------------
    binary("aten.add.Tensor", "add", "Default", ANY,
           "Elementwise `self + alpha * other` with broadcasting",
           args=[optional("alpha", ALPHA)], coefficients=["alpha"]),
    binary("aten.sub.Tensor", "sub", "Default", ANY,
           "Elementwise `self - alpha * other` with broadcasting",
           args=[optional("alpha", ALPHA)], coefficients=["alpha"],
           reject_bool=True),
    binary("aten.mul.Tensor", "mul", "Default", ANY,
           "Elementwise `self * other` with broadcasting"),
    binary("aten.div.Tensor", "div", "IntToFloat", ANY,
           "Elementwise true division; integral operands give f32"),
    binary("aten.div.Tensor_mode", "div_mode", "Default", ANY,
           "Elementwise division rounded by `rounding_mode`",
           args=[attr("rounding_mode", ROUNDING_MODE)]),
    binary("aten.pow.Tensor_Tensor", "pow", "BoolToLong", ANY,
           "Elementwise `self ** exponent`", other="exponent"),
    binary("aten.remainder.Tensor", "remainder", "Default", REAL,
           "Elementwise Python-style modulus (sign of the divisor)"),
    binary("aten.fmod.Tensor", "fmod", "Default", REAL,
           "Elementwise C-style modulus (sign of the dividend)"),
    binary("aten.maximum.default", "maximum", "Default", NONCOMPLEX,
           "Elementwise maximum, propagating NaN"),
    binary("aten.minimum.default", "minimum", "Default", NONCOMPLEX,
           "Elementwise minimum, propagating NaN"),
    op("aten._conj.default", "conj", same_type_unary(),
       [tensor("self", COMPLEX)], [result("result", COMPLEX)],
       "Elementwise complex conjugate: the imaginary part negated",
       notes="PyTorch's `_conj` is a view that sets a conjugate bit; here it "
       "is the conjugated values.",
       also={"aten.conj_physical.default": "the same values",
             "aten._conj_physical.default": "the same values"}),
    op("aten.complex.default", "complex", elementwise("FloatToComplex"),
       [tensor("real", FLOAT), tensor("imag", FLOAT)],
       [result("result", COMPLEX)],
       "Complex numbers from broadcast real and imaginary parts"),
    op("aten.polar.default", "polar", elementwise("FloatToComplex"),
       [tensor("abs", FLOAT), tensor("angle", FLOAT)],
       [result("result", COMPLEX)],
       "Complex numbers `abs * (cos(angle) + i sin(angle))` from broadcast "
       "polar coordinates"),
    op("aten.angle.default", "angle", elementwise("ComplexToFloat"),
       [tensor("self", FLOATCOMPLEX)], [result("result", FLOAT)],
       "Elementwise argument: `atan2(imag, real)`; pi for negative reals, "
       "0 for other reals"),
    op("aten.atan2.default", "atan2", elementwise("IntToFloat"),
       [tensor("self", NONCOMPLEX), tensor("other", NONCOMPLEX)],
       [result("result", FLOAT)],
       "Elementwise `atan(self / other)` in the right quadrant",
       also={"aten.atan2.out": "its value; `out` is functionalised away"}),
    binary("aten.bitwise_and.Tensor", "bitwise_and", "Default", INTBOOL,
           "Elementwise bitwise and"),
    binary("aten.bitwise_or.Tensor", "bitwise_or", "Default", INTBOOL,
           "Elementwise bitwise or"),
    binary("aten.bitwise_xor.Tensor", "bitwise_xor", "Default", INTBOOL,
           "Elementwise bitwise xor"),
    binary("aten.bitwise_left_shift.Tensor", "bitwise_left_shift", "Default",
           INTBOOL, "Elementwise `self << other`: 0 for shifts outside "
           "[0, bits)"),
    binary("aten.bitwise_right_shift.Tensor", "bitwise_right_shift",
           "Default", INTBOOL, "Elementwise `self >> other`, arithmetic for "
           "signed dtypes: the sign for shifts outside [0, bits)"),
    binary("aten.logical_and.default", "logical_and", "AlwaysBool", ANY,
           "Elementwise logical and, as bool", result_type=BOOL),
    binary("aten.logical_or.default", "logical_or", "AlwaysBool", ANY,
           "Elementwise logical or, as bool", result_type=BOOL),
    binary("aten.logical_xor.default", "logical_xor", "AlwaysBool", ANY,
           "Elementwise logical xor, as bool", result_type=BOOL),
    binary("aten.eq.Tensor", "eq", "AlwaysBool", ANY,
           "Elementwise `self == other`", result_type=BOOL),
    binary("aten.ne.Tensor", "ne", "AlwaysBool", ANY,
           "Elementwise `self != other`", result_type=BOOL),
    binary("aten.lt.Tensor", "lt", "AlwaysBool", NONCOMPLEX,
           "Elementwise `self < other`", result_type=BOOL),
    binary("aten.le.Tensor", "le", "AlwaysBool", NONCOMPLEX,
           "Elementwise `self <= other`", result_type=BOOL),
    binary("aten.gt.Tensor", "gt", "AlwaysBool", NONCOMPLEX,
           "Elementwise `self > other`", result_type=BOOL),
    binary("aten.ge.Tensor", "ge", "AlwaysBool", NONCOMPLEX,
           "Elementwise `self >= other`", result_type=BOOL),

    # -- Elementwise binary with a Scalar ---------------------------------
    binary_scalar("aten.add.Scalar", "add_scalar", "Default", ANY,
                  "Elementwise `self + alpha * other` with a scalar `other`",
                  args=[optional("alpha", ALPHA)], coefficients=["alpha"]),
    binary_scalar("aten.sub.Scalar", "sub_scalar", "Default", ANY,
                  "Elementwise `self - alpha * other` with a scalar `other`",
                  args=[optional("alpha", ALPHA)], coefficients=["alpha"],
                  reject_bool=True),
    binary_scalar("aten.mul.Scalar", "mul_scalar", "Default", ANY,
                  "Elementwise `self * other` with a scalar `other`"),
    binary_scalar("aten.div.Scalar", "div_scalar", "IntToFloat", ANY,
                  "Elementwise true division by a scalar"),
    binary_scalar("aten.div.Scalar_mode", "div_scalar_mode", "Default", ANY,
                  "Elementwise division by a scalar, rounded by "
                  "`rounding_mode`",
                  args=[attr("rounding_mode", ROUNDING_MODE)]),
    binary_scalar("aten.pow.Tensor_Scalar", "pow_tensor_scalar",
                  "BoolToLong", ANY, "Elementwise `self ** exponent` with a "
                  "scalar exponent", other="exponent"),
    op("aten.pow.Scalar", "pow_scalar",
       elementwise("BoolToLong", scalars=["self"]),
       [attr("self", SCALAR), tensor("exponent")], [result()],
       "Elementwise `self ** exponent` with a scalar base"),
    binary_scalar("aten.remainder.Scalar", "remainder_scalar", "Default",
                  REAL, "Elementwise Python-style modulus by a scalar"),
    binary_scalar("aten.fmod.Scalar", "fmod_scalar", "Default", REAL,
                  "Elementwise C-style modulus by a scalar"),
    binary_scalar("aten.bitwise_and.Scalar", "bitwise_and_scalar", "Default",
                  INTBOOL, "Elementwise bitwise and with a scalar"),
    binary_scalar("aten.bitwise_or.Scalar", "bitwise_or_scalar", "Default",
                  INTBOOL, "Elementwise bitwise or with a scalar"),
    binary_scalar("aten.bitwise_xor.Scalar", "bitwise_xor_scalar", "Default",
                  INTBOOL, "Elementwise bitwise xor with a scalar"),
    binary_scalar("aten.bitwise_left_shift.Tensor_Scalar",
                  "bitwise_left_shift_scalar", "Default", INTBOOL,
                  "Elementwise `self << other` with a scalar `other`"),
    binary_scalar("aten.bitwise_right_shift.Tensor_Scalar",
                  "bitwise_right_shift_scalar", "Default", INTBOOL,
                  "Elementwise `self >> other` with a scalar `other`"),
    binary_scalar("aten.eq.Scalar", "eq_scalar", "AlwaysBool", ANY,
                  "Elementwise `self == other` with a scalar",
                  result_type=BOOL),
    binary_scalar("aten.ne.Scalar", "ne_scalar", "AlwaysBool", ANY,
                  "Elementwise `self != other` with a scalar",
                  result_type=BOOL),
    binary_scalar("aten.lt.Scalar", "lt_scalar", "AlwaysBool", NONCOMPLEX,
                  "Elementwise `self < other` with a scalar",
                  result_type=BOOL),
    binary_scalar("aten.le.Scalar", "le_scalar", "AlwaysBool", NONCOMPLEX,
                  "Elementwise `self <= other` with a scalar",
                  result_type=BOOL),
    binary_scalar("aten.gt.Scalar", "gt_scalar", "AlwaysBool", NONCOMPLEX,
                  "Elementwise `self > other` with a scalar",
                  result_type=BOOL),
    binary_scalar("aten.ge.Scalar", "ge_scalar", "AlwaysBool", NONCOMPLEX,
                  "Elementwise `self >= other` with a scalar",
                  result_type=BOOL),

    # -- Elementwise ternary ----------------------------------------------
    op("aten.where.self", "where", elementwise("Default", promoted=[1, 2]),
       [tensor("condition", BOOL), tensor("self"), tensor("other")],
       [result()], "Elementwise `condition ? self : other` with broadcasting",
       notes="The condition broadcasts but takes no part in promotion."),
    op("aten.addcmul.default", "addcmul",
       elementwise("Default", coefficients=["value"]),
       [tensor("self"), tensor("tensor1"), tensor("tensor2"),
        optional("value", SCALAR)], [result()],
       "Elementwise `self + value * tensor1 * tensor2`",
       notes="`value` defaults to 1."),
    op("aten.addcdiv.default", "addcdiv",
       elementwise("Default", coefficients=["value"]),
       [tensor("self"), tensor("tensor1"), tensor("tensor2"),
        optional("value", SCALAR)], [result("result", FLOATCOMPLEX)],
       "Elementwise `self + value * tensor1 / tensor2`",
       notes="`value` defaults to 1. Integral division is rejected, as in "
       "PyTorch."),
    op("aten.lerp.Scalar", "lerp_scalar", elementwise("Default"),
       [tensor("self", FLOATCOMPLEX), tensor("end", FLOATCOMPLEX),
        attr("weight", SCALAR)], [result("result", FLOATCOMPLEX)],
       "Elementwise `self + weight * (end - self)` with a scalar weight"),
    op("aten.lerp.Tensor", "lerp", elementwise("Default"),
       [tensor("self", FLOATCOMPLEX), tensor("end", FLOATCOMPLEX),
        tensor("weight", FLOATCOMPLEX)], [result("result", FLOATCOMPLEX)],
       "Elementwise `self + weight * (end - self)`"),

    # -- Pointwise backwards ----------------------------------------------
    op("aten.threshold_backward.default", "threshold_backward",
       elementwise("Default"),
       [tensor("grad_output", REAL), tensor("self", REAL),
        attr("threshold", SCALAR)], [result("result", REAL)],
       "`grad_output` where `self > threshold`, else 0 (relu's backward)"),
    op("aten.sigmoid_backward.default", "sigmoid_backward",
       elementwise("Default"),
       [tensor("grad_output", FLOATCOMPLEX), tensor("output", FLOATCOMPLEX)],
       [result("result", FLOATCOMPLEX)],
       "`grad_output * output * (1 - output)`"),
    op("aten.tanh_backward.default", "tanh_backward", elementwise("Default"),
       [tensor("grad_output", FLOATCOMPLEX), tensor("output", FLOATCOMPLEX)],
       [result("result", FLOATCOMPLEX)],
       "`grad_output * (1 - output * output)`"),
    op("aten.gelu_backward.default", "gelu_backward", elementwise("Default"),
       [tensor("grad_output", FLOAT), tensor("self", FLOAT),
        default("approximate", GELU_APPROXIMATION, '"none"')],
       [result("result", FLOAT)], "The gradient of `gelu` at `self`"),
    op("aten.silu_backward.default", "silu_backward", elementwise("Default"),
       [tensor("grad_output", FLOAT), tensor("self", FLOAT)],
       [result("result", FLOAT)], "The gradient of `silu` at `self`"),
    op("aten.hardtanh_backward.default", "hardtanh_backward",
       elementwise("Default"),
       [tensor("grad_output", REAL), tensor("self", REAL),
        attr("min_val", F64), attr("max_val", F64)],
       [result("result", REAL)],
       "`grad_output` where `min_val < self < max_val`, else 0"),
    op("aten.leaky_relu_backward.default", "leaky_relu_backward",
       elementwise("Default"),
       [tensor("grad_output", FLOAT), tensor("self", FLOAT),
        attr("negative_slope", F64), attr("self_is_result", BOOLATTR)],
       [result("result", FLOAT)], "The gradient of `leaky_relu` at `self`"),
    op("aten.elu_backward.default", "elu_backward", elementwise("Default"),
       [tensor("grad_output", FLOAT), attr("alpha", F64), attr("scale", F64),
        attr("input_scale", F64), attr("is_result", BOOLATTR),
        tensor("self_or_result", FLOAT)], [result("result", FLOAT)],
       "The gradient of `elu`"),
    op("aten.native_dropout_backward.default", "native_dropout_backward",
       elementwise("Default", promoted=[0]),
       [tensor("grad_output", FLOAT), tensor("mask", BOOL), attr("scale", F64)],
       [result("result", FLOAT)], "`grad_output * mask * scale`"),

    # -- Reductions, scans, sorts -----------------------------------------
    op("aten.sum.dim_IntList", "sum", reduction("Sum"),
       [tensor("self"), optional("dim", I64S),
        default("keepdim", BOOLATTR, "false"), optional("dtype", DTYPE)],
       [result()], "Sum over `dim` (all dimensions when absent or empty)",
       notes="Integral inputs sum to si64 unless `dtype` is given.",
       also={"aten.sum.default": "without `dim`"}),
    op("aten.mean.dim", "mean", reduction("Mean"),
       [tensor("self"), optional("dim", I64S),
        default("keepdim", BOOLATTR, "false"), optional("dtype", DTYPE)],
       [result("result", FLOATCOMPLEX)],
       "Mean over `dim` (all dimensions when absent or empty)",
       also={"aten.mean.default": "without `dim`"}),
    op("aten.prod.default", "prod", reduction("Sum"),
       [tensor("self"), optional("dtype", DTYPE)], [result()],
       "Product of all elements",
       notes="Integral inputs multiply in si64 unless `dtype` is given."),
    op("aten.prod.dim_int", "prod_dim_int", reduction("Sum"),
       [tensor("self"), attr("dim", I64), default("keepdim", BOOLATTR, "false"),
        optional("dtype", DTYPE)], [result()], "Product along `dim`"),
    op("aten.amax.default", "amax", reduction("SameDtype"),
       [tensor("self", NONCOMPLEX), default("dim", I64S, "{}"),
        default("keepdim", BOOLATTR, "false")], [result("result", NONCOMPLEX)],
       "Maximum over `dim` (all dimensions when empty), propagating NaN"),
    op("aten.amin.default", "amin", reduction("SameDtype"),
       [tensor("self", NONCOMPLEX), default("dim", I64S, "{}"),
        default("keepdim", BOOLATTR, "false")], [result("result", NONCOMPLEX)],
       "Minimum over `dim` (all dimensions when empty), propagating NaN"),
    op("aten.max.dim", "max_dim", reduction("ValuesAndIndices"),
       [tensor("self", NONCOMPLEX), attr("dim", I64),
        default("keepdim", BOOLATTR, "false")],
       [result("values", NONCOMPLEX), result("indices", INDEX)],
       "Maximum along `dim` and the si64 index of its first occurrence"),
    op("aten.min.dim", "min_dim", reduction("ValuesAndIndices"),
       [tensor("self", NONCOMPLEX), attr("dim", I64),
        default("keepdim", BOOLATTR, "false")],
       [result("values", NONCOMPLEX), result("indices", INDEX)],
       "Minimum along `dim` and the si64 index of its first occurrence"),
    op("aten.argmax.default", "argmax", reduction("ArgIndex"),
       [tensor("self", NONCOMPLEX), optional("dim", I64),
        default("keepdim", BOOLATTR, "false")], [result("result", INDEX)],
       "The si64 index of the maximum along `dim` (of the flattened tensor "
       "when absent)"),
    op("aten.argmin.default", "argmin", reduction("ArgIndex"),
       [tensor("self", NONCOMPLEX), optional("dim", I64),
        default("keepdim", BOOLATTR, "false")], [result("result", INDEX)],
       "The si64 index of the minimum along `dim` (of the flattened tensor "
       "when absent)"),
    op("aten.var.correction", "var", reduction("Var"),
       [tensor("self", FLOATCOMPLEX), optional("dim", I64S),
        optional("correction", SCALAR), default("keepdim", BOOLATTR, "false")],
       [result("result", FLOAT)],
       "Variance over `dim` with Bessel's `correction` (1 when absent)",
       also={"aten.var.dim": "`correction` 1 if `unbiased`, else 0"}),
    op("aten.var_mean.correction", "var_mean", reduction("VarMean"),
       [tensor("self", FLOATCOMPLEX), optional("dim", I64S),
        optional("correction", SCALAR), default("keepdim", BOOLATTR, "false")],
       [result("var", FLOAT), result("mean", FLOATCOMPLEX)],
       "Variance and mean over `dim`"),
    op("aten.any.default", "any", reduction("AnyAll"),
       [tensor("self")], [result()],
       "Whether any element is non-zero",
       notes="bool, or uint8 for a uint8 input, as in PyTorch."),
    op("aten.any.dim", "any_dim", reduction("AnyAll"),
       [tensor("self"), attr("dim", I64), default("keepdim", BOOLATTR, "false")],
       [result()], "Whether any element along `dim` is non-zero"),
    op("aten.any.dims", "any_dims", reduction("AnyAll"),
       [tensor("self"), optional("dim", I64S),
        default("keepdim", BOOLATTR, "false")],
       [result()], "Whether any element over `dim` is non-zero"),
    op("aten.all.default", "all", reduction("AnyAll"),
       [tensor("self")], [result()], "Whether all elements are non-zero"),
    op("aten.all.dim", "all_dim", reduction("AnyAll"),
       [tensor("self"), attr("dim", I64), default("keepdim", BOOLATTR, "false")],
       [result()], "Whether all elements along `dim` are non-zero"),
    op("aten.logsumexp.default", "logsumexp", reduction("LogSumExp"),
       [tensor("self"), attr("dim", I64S),
        default("keepdim", BOOLATTR, "false")],
       [result("result", FLOATCOMPLEX)],
       "`log(sum(exp(self)))` over `dim`, computed stably"),
    op("aten.cumsum.default", "cumsum", reduction("Cumulative"),
       [tensor("self"), attr("dim", I64), optional("dtype", DTYPE)],
       [result()], "Inclusive prefix sum along `dim`"),
    op("aten.cumprod.default", "cumprod", reduction("Cumulative"),
       [tensor("self"), attr("dim", I64), optional("dtype", DTYPE)],
       [result()], "Inclusive prefix product along `dim`"),
    op("aten.sort.default", "sort", reduction("Sort"),
       [tensor("self", NONCOMPLEX), default("dim", I64, "-1"),
        default("descending", BOOLATTR, "false")],
       [result("values", NONCOMPLEX), result("indices", INDEX)],
       "The elements sorted along `dim` and their si64 source indices"),
    op("aten.topk.default", "topk", reduction("TopK"),
       [tensor("self", NONCOMPLEX), attr("k", I64), default("dim", I64, "-1"),
        default("largest", BOOLATTR, "true"),
        default("sorted", BOOLATTR, "true")],
       [result("values", NONCOMPLEX), result("indices", INDEX)],
       "The `k` largest (or smallest) elements along `dim` and their indices"),

    # -- Softmax and normalisation ----------------------------------------
    op("aten._softmax.default", "softmax", normalization("Softmax"),
       [tensor("self", FLOAT), attr("dim", I64),
        attr("half_to_float", BOOLATTR)], [result("result", FLOAT)],
       "Softmax along `dim`",
       notes="`half_to_float` gives an f32 result for an f16 or bf16 input."),
    op("aten._log_softmax.default", "log_softmax", normalization("Softmax"),
       [tensor("self", FLOAT), attr("dim", I64),
        attr("half_to_float", BOOLATTR)], [result("result", FLOAT)],
       "Log-softmax along `dim`"),
    op("aten._softmax_backward_data.default", "softmax_backward_data",
       normalization("SoftmaxBackward"),
       [tensor("grad_output", FLOAT), tensor("output", FLOAT),
        attr("dim", I64), attr("input_dtype", DTYPE)],
       [result("result", FLOAT)],
       "The gradient of softmax, in the forward input's dtype"),
    op("aten._log_softmax_backward_data.default", "log_softmax_backward_data",
       normalization("SoftmaxBackward"),
       [tensor("grad_output", FLOAT), tensor("output", FLOAT),
        attr("dim", I64), attr("input_dtype", DTYPE)],
       [result("result", FLOAT)],
       "The gradient of log-softmax, in the forward input's dtype"),
    op("aten.native_layer_norm.default", "native_layer_norm",
       normalization("LayerNorm"),
       [tensor("input", FLOAT), attr("normalized_shape", I64S),
        optional_tensor("weight", FLOAT), optional_tensor("bias", FLOAT),
        attr("eps", F64)],
       [result("output", FLOAT), result("mean", FLOAT),
        result("rstd", FLOAT)],
       "Layer normalisation over the trailing `normalized_shape` dimensions",
       notes="`mean` and `rstd` have the input's leading sizes and a 1 per "
       "normalised dimension."),
    op("aten.native_layer_norm_backward.default", "native_layer_norm_backward",
       normalization("LayerNormBackward"),
       [tensor("grad_out", FLOAT), tensor("input", FLOAT),
        attr("normalized_shape", I64S), tensor("mean", FLOAT),
        tensor("rstd", FLOAT), optional_tensor("weight", FLOAT),
        optional_tensor("bias", FLOAT), attr("output_mask", MASK3)],
       [result("grad_input", FLOAT), result("grad_weight", FLOAT),
        result("grad_bias", FLOAT)],
       "The gradients of `native_layer_norm`",
       notes="A result whose `output_mask` entry is false is undefined (ATen "
       "returns None); it keeps the type it would have."),
    op("aten.native_group_norm.default", "native_group_norm",
       normalization("GroupNorm"),
       [tensor("input", FLOAT), optional_tensor("weight", FLOAT),
        optional_tensor("bias", FLOAT), attr("group", I64), attr("eps", F64)],
       [result("output", FLOAT), result("mean", FLOAT),
        result("rstd", FLOAT)],
       "Group normalisation of an [N, C, *] input",
       notes="ATen's `N`, `C` and `HxW` are the input's sizes and are "
       "dropped. `mean` and `rstd` are [N, group]."),
    op("aten.native_group_norm_backward.default", "native_group_norm_backward",
       normalization("GroupNormBackward"),
       [tensor("grad_out", FLOAT), tensor("input", FLOAT),
        tensor("mean", FLOAT), tensor("rstd", FLOAT),
        optional_tensor("weight", FLOAT), attr("group", I64),
        attr("output_mask", MASK3)],
       [result("grad_input", FLOAT), result("grad_weight", FLOAT),
        result("grad_bias", FLOAT)],
       "The gradients of `native_group_norm`",
       notes="Results masked off by `output_mask` are undefined."),
    op("aten._native_batch_norm_legit_no_training.default",
       "native_batch_norm_legit_no_training",
       normalization("BatchNormInference"),
       [tensor("input", FLOAT), optional_tensor("weight", FLOAT),
        optional_tensor("bias", FLOAT), tensor("running_mean", FLOAT),
        tensor("running_var", FLOAT), attr("momentum", F64),
        attr("eps", F64)],
       [result("output", FLOAT), result("save_mean", FLOAT),
        result("save_invstd", FLOAT)],
       "Batch normalisation with the running statistics (evaluation mode)",
       notes="The saved statistics are empty ([0])."),
    op("aten._native_batch_norm_legit_functional.default",
       "native_batch_norm_legit_functional",
       normalization("BatchNormFunctional"),
       [tensor("input", FLOAT), optional_tensor("weight", FLOAT),
        optional_tensor("bias", FLOAT), tensor("running_mean", FLOAT),
        tensor("running_var", FLOAT), attr("training", BOOLATTR),
        attr("momentum", F64), attr("eps", F64)],
       [result("output", FLOAT), result("save_mean", FLOAT),
        result("save_invstd", FLOAT), result("running_mean_out", FLOAT),
        result("running_var_out", FLOAT)],
       "Batch normalisation that returns the updated running statistics",
       notes="The value-semantics form of `_native_batch_norm_legit`, whose "
       "in-place update of the running statistics AOTAutograd "
       "functionalises."),
    op("aten._native_batch_norm_legit.no_stats",
       "native_batch_norm_legit_no_stats",
       normalization("BatchNormNoStats"),
       [tensor("input", FLOAT), optional_tensor("weight", FLOAT),
        optional_tensor("bias", FLOAT), attr("training", BOOLATTR),
        attr("momentum", F64), attr("eps", F64)],
       [result("output", FLOAT), result("save_mean", FLOAT),
        result("save_invstd", FLOAT)],
       "Batch normalisation without running statistics"),
    op("aten.native_batch_norm_backward.default", "native_batch_norm_backward",
       normalization("BatchNormBackward"),
       [tensor("grad_out", FLOAT), tensor("input", FLOAT),
        optional_tensor("weight", FLOAT),
        optional_tensor("running_mean", FLOAT),
        optional_tensor("running_var", FLOAT),
        optional_tensor("save_mean", FLOAT),
        optional_tensor("save_invstd", FLOAT), attr("train", BOOLATTR),
        attr("eps", F64), attr("output_mask", MASK3)],
       [result("grad_input", FLOAT), result("grad_weight", FLOAT),
        result("grad_bias", FLOAT)],
       "The gradients of batch normalisation",
       notes="Results masked off by `output_mask` are undefined."),

    # -- Matrix products, convolution, attention --------------------------
    op("aten.mm.default", "mm", linalg("Mm"),
       [tensor("self", NUMERIC), tensor("mat2", NUMERIC)],
       [result("result", NUMERIC)], "Matrix product [n, k] x [k, m]"),
    op("aten.bmm.default", "bmm", linalg("Bmm"),
       [tensor("self", NUMERIC), tensor("mat2", NUMERIC)],
       [result("result", NUMERIC)],
       "Batched matrix product [b, n, k] x [b, k, m]"),
    op("aten.addmm.default", "addmm", linalg("Addmm"),
       [tensor("self", NUMERIC), tensor("mat1", NUMERIC),
        tensor("mat2", NUMERIC), optional("beta", SCALAR),
        optional("alpha", SCALAR)], [result("result", NUMERIC)],
       "`beta * self + alpha * (mat1 x mat2)`, `self` broadcast",
       notes="`beta` and `alpha` default to 1."),
    op("aten.baddbmm.default", "baddbmm", linalg("Baddbmm"),
       [tensor("self", NUMERIC), tensor("batch1", NUMERIC),
        tensor("batch2", NUMERIC), optional("beta", SCALAR),
        optional("alpha", SCALAR)], [result("result", NUMERIC)],
       "`beta * self + alpha * (batch1 x batch2)`, `self` broadcast"),
    op("aten.convolution.default", "convolution", linalg("Convolution"),
       [tensor("input", NUMERIC), tensor("weight", NUMERIC),
        optional_tensor("bias", NUMERIC), attr("stride", I64S),
        attr("padding", I64S), attr("dilation", I64S),
        attr("transposed", BOOLATTR), attr("output_padding", I64S),
        attr("groups", I64)], [result("result", NUMERIC)],
       "N-d (transposed) convolution of [N, C, *] (or unbatched) inputs"),
    op("aten.convolution_backward.default", "convolution_backward",
       linalg("ConvolutionBackward"),
       [tensor("grad_output", NUMERIC), tensor("input", NUMERIC),
        tensor("weight", NUMERIC), optional("bias_sizes", I64S),
        attr("stride", I64S), attr("padding", I64S), attr("dilation", I64S),
        attr("transposed", BOOLATTR), attr("output_padding", I64S),
        attr("groups", I64), attr("output_mask", MASK3)],
       [result("grad_input", NUMERIC), result("grad_weight", NUMERIC),
        result("grad_bias", NUMERIC)],
       "The gradients of `convolution` for input, weight and bias",
       notes="Results masked off by `output_mask` are undefined."),
    op("aten._scaled_dot_product_flash_attention_for_cpu.default",
       "scaled_dot_product_flash_attention_for_cpu",
       linalg("FlashAttentionForCpu"),
       [tensor("query", FLOAT), tensor("key", FLOAT), tensor("value", FLOAT),
        default("dropout_p", F64, "0.0"),
        default("is_causal", BOOLATTR, "false"),
        optional_tensor("attn_mask", FLOAT), optional("scale", F64)],
       [result("output", FLOAT), result("logsumexp", FLOAT)],
       "Scaled dot-product attention of [B, H, L, E] queries (CPU kernel)",
       notes="`logsumexp` is [B, H, L] in the compute dtype."),
    op("aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
       "scaled_dot_product_flash_attention_for_cpu_backward",
       linalg("FlashAttentionForCpuBackward"),
       [tensor("grad_out", FLOAT), tensor("query", FLOAT),
        tensor("key", FLOAT), tensor("value", FLOAT), tensor("out", FLOAT),
        tensor("logsumexp", FLOAT), attr("dropout_p", F64),
        attr("is_causal", BOOLATTR), optional_tensor("attn_mask", FLOAT),
        optional("scale", F64)],
       [result("grad_query", FLOAT), result("grad_key", FLOAT),
        result("grad_value", FLOAT)],
       "The gradients of `scaled_dot_product_flash_attention_for_cpu`"),
    op("aten._scaled_dot_product_efficient_attention.default",
       "scaled_dot_product_efficient_attention",
       linalg("EfficientAttention"),
       [tensor("query", FLOAT), tensor("key", FLOAT), tensor("value", FLOAT),
        optional_tensor("attn_bias", FLOAT),
        attr("compute_log_sumexp", BOOLATTR),
        default("dropout_p", F64, "0.0"),
        default("is_causal", BOOLATTR, "false"), optional("scale", F64)],
       [result("output", FLOAT), result("log_sumexp", FLOAT),
        result("philox_seed", INDEX), result("philox_offset", INDEX)],
       "Scaled dot-product attention (memory-efficient CUDA kernel)",
       notes="`log_sumexp` is [B, H, L rounded up to 32] in f32, or "
       "[B, H, 0] without `compute_log_sumexp`."),
    op("aten._scaled_dot_product_efficient_attention_backward.default",
       "scaled_dot_product_efficient_attention_backward",
       linalg("EfficientAttentionBackward"),
       [tensor("grad_out", FLOAT), tensor("query", FLOAT),
        tensor("key", FLOAT), tensor("value", FLOAT),
        optional_tensor("attn_bias", FLOAT), tensor("out", FLOAT),
        tensor("logsumexp", FLOAT), tensor("philox_seed", INDEX),
        tensor("philox_offset", INDEX), attr("dropout_p", F64),
        attr("grad_input_mask", BOOLS),
        default("is_causal", BOOLATTR, "false"), optional("scale", F64)],
       [result("grad_query", FLOAT), result("grad_key", FLOAT),
        result("grad_value", FLOAT), result("grad_bias", FLOAT)],
       "The gradients of `scaled_dot_product_efficient_attention`",
       notes="`grad_input_mask` says which of the query's, key's, value's "
       "and bias's gradients are wanted. `grad_bias` is undefined unless "
       "there is a bias and its gradient is wanted; it then has the bias's "
       "type, else it is empty ([0])."),

    op("aten._pdist_forward.default", "pdist_forward", linalg("Pdist"),
       [tensor("self", FLOAT), default("p", F64, "2.0")],
       [result("result", FLOAT)],
       "The p-norm distances between all pairs of rows of [N, M]",
       notes="The result is the upper triangle, N * (N - 1) / 2 values."),
    op("aten._cdist_forward.default", "cdist_forward", linalg("Cdist"),
       [tensor("x1", FLOAT), tensor("x2", FLOAT), attr("p", F64),
        optional("compute_mode", I64)], [result("result", FLOAT)],
       "The p-norm distances between the rows of [*, P, M] and [*, R, M]"),
    op("aten._fft_r2c.default", "fft_r2c", linalg("FftR2C"),
       [tensor("self", FLOAT), attr("dim", I64S), attr("normalization", I64),
        attr("onesided", BOOLATTR)], [result("result", COMPLEX)],
       "Real-to-complex discrete Fourier transform over `dim`",
       notes="With `onesided` the last transformed dimension keeps n / 2 + 1 "
       "frequencies."),
    op("aten._fft_c2r.default", "fft_c2r", linalg("FftC2R"),
       [tensor("self", COMPLEX), attr("dim", I64S), attr("normalization", I64),
        attr("last_dim_size", I64)], [result("result", FLOAT)],
       "Complex-to-real inverse discrete Fourier transform over `dim`"),
    op("aten._fft_c2c.default", "fft_c2c", linalg("FftC2C"),
       [tensor("self", COMPLEX), attr("dim", I64S), attr("normalization", I64),
        attr("forward", BOOLATTR)], [result("result", COMPLEX)],
       "Complex-to-complex discrete Fourier transform over `dim`",
       notes="The inverse transform (+ in the exponent) unless `forward`."),

    # -- Views and shape ops ----------------------------------------------
    op("aten.view.default", "view", shape("View"),
       [tensor("self"), SIZE_SYMBOLS],
       [result()], "`self` with the result's shape",
       notes="ATen's `size` is the result type's shape. `size_symbols`, "
       "where present, names the graph's size symbol that each `?` of the "
       "result is, in order: with it, a view may split dynamic sizes "
       "(`[s0*s1, 64] -> [s0, s1, 64]`), which the types alone leave "
       "ambiguous."),
    op("aten._unsafe_view.default", "unsafe_view", shape("View"),
       [tensor("self"), SIZE_SYMBOLS],
       [result()],
       "`self` with the result's shape, not tracked as a view",
       notes="`size_symbols` as for `view`."),
    op("aten.permute.default", "permute", shape("Permute"),
       [tensor("self"), attr("dims", I64S)], [result()],
       "`self` with its dimensions in the order `dims`"),
    op("aten.expand.default", "expand", shape("Expand"),
       [tensor("self"), default("implicit", BOOLATTR, "false"), SIZE_SYMBOLS],
       [result()], "`self` broadcast to the result's shape",
       notes="ATen's `size` is the result type's shape. `size_symbols`, "
       "where present, names the graph's size symbol that each `?` of the "
       "result is, in order: a size-1 dimension expanded to a `?` has no "
       "other source for its size."),
    op("aten.squeeze.dims", "squeeze", shape("Squeeze"),
       [tensor("self"), attr("dim", I64S)], [result()],
       "`self` without the size-1 dimensions among `dim`",
       also={"aten.squeeze.dim": "`dim` of one dimension",
             "aten.squeeze.default": "`dim` listing every dimension"}),
    op("aten.unsqueeze.default", "unsqueeze", shape("Unsqueeze"),
       [tensor("self"), attr("dim", I64)], [result()],
       "`self` with a size-1 dimension inserted at `dim`"),
    op("aten.slice.Tensor", "slice", shape("Slice"),
       [tensor("self"), default("dim", I64, "0"), optional("start", I64),
        optional("end", I64), default("step", I64, "1"),
        symbolic_int("dynamic_start"), symbolic_int("dynamic_end")], [result()],
       "`self[..., start:end:step, ...]` along `dim`",
       notes="A symbolic `start` or `end` is the operand `dynamic_start` or "
       "`dynamic_end` instead of the attribute."),
    op("aten.select.int", "select", shape("Select"),
       [tensor("self"), attr("dim", I64), optional("index", I64),
        symbolic_int("dynamic_index")], [result()],
       "`self[..., index, ...]` along `dim`, which disappears",
       notes="Exactly one of the attribute `index` and the operand "
       "`dynamic_index` (a symbolic index) is given."),
    op("aten.view_as_complex.default", "view_as_complex",
       shape("ViewAsComplex"), [tensor("self", FLOAT)],
       [result("result", COMPLEX)],
       "`self`'s last dimension, of size 2, as complex numbers' real and "
       "imaginary parts",
       notes="f32 and f64 become complex<f32> and complex<f64>."),
    op("aten.view_as_real.default", "view_as_real", shape("ViewAsReal"),
       [tensor("self", COMPLEX)], [result("result", FLOAT)],
       "`self`'s complex numbers as a last dimension of size 2: real part, "
       "imaginary part"),
    op("aten.cat.default", "cat", shape("Cat"),
       [tensor_list("tensors"), default("dim", I64, "0")], [result()],
       "Concatenation along `dim`, with type promotion"),
    op("aten.split_with_sizes.default", "split_with_sizes", shape("Split"),
       [tensor("self"), default("dim", I64, "0")], [result_list("results")],
       "Consecutive slices of `self` along `dim`",
       notes="ATen's `split_sizes` are the results' sizes along `dim`."),
    op("aten.as_strided.default", "as_strided", shape("AsStrided"),
       [tensor("self"), attr("stride", I64S), optional("storage_offset", I64)],
       [result()], "A view of `self`'s storage with the result's shape and "
       "`stride`",
       notes="`self`'s storage is its elements in row-major order: importers "
       "emit the op only where eager's operand is contiguous and owns "
       "exactly its storage."),
    op("aten.constant_pad_nd.default", "constant_pad_nd", shape("ConstantPad"),
       [tensor("self"), attr("pad", I64S), optional("value", SCALAR)],
       [result()],
       "`self` padded (or cropped) by `pad`, pairs from the last dimension",
       notes="`value` defaults to 0."),
    op("aten.reflection_pad1d.default", "reflection_pad1d", shape("Pad"),
       [tensor("self"), attr("padding", pad_list(2))], [result()],
       "Reflection padding of the last dimension"),
    op("aten.reflection_pad2d.default", "reflection_pad2d", shape("Pad"),
       [tensor("self"), attr("padding", pad_list(4))], [result()],
       "Reflection padding of the last 2 dimensions"),
    op("aten.reflection_pad3d.default", "reflection_pad3d", shape("Pad"),
       [tensor("self"), attr("padding", pad_list(6))], [result()],
       "Reflection padding of the last 3 dimensions"),
    op("aten.replication_pad2d.default", "replication_pad2d", shape("Pad"),
       [tensor("self"), attr("padding", pad_list(4))], [result()],
       "Edge-replication padding of the last 2 dimensions"),
    op("aten.replication_pad3d.default", "replication_pad3d", shape("Pad"),
       [tensor("self"), attr("padding", pad_list(6))], [result()],
       "Edge-replication padding of the last 3 dimensions"),
    op("aten.flip.default", "flip", shape("Flip"),
       [tensor("self"), attr("dims", I64S)], [result()],
       "`self` reversed along `dims`"),
    op("aten.repeat.default", "repeat", shape("Repeat"),
       [tensor("self"), attr("repeats", I64S)], [result()],
       "`self` tiled `repeats` times per dimension"),
    op("aten.diagonal.default", "diagonal", shape("Diagonal"),
       [tensor("self"), default("offset", I64, "0"), default("dim1", I64, "0"),
        default("dim2", I64, "1")], [result()],
       "The diagonal of `dim1` and `dim2`, as a last dimension"),
    op("aten.copy.default", "copy", shape("Copy"),
       [tensor("self"), tensor("src")], [result()],
       "`src` broadcast and converted to `self`'s type"),
    op("aten.slice_scatter.default", "slice_scatter", shape("SliceScatter"),
       [tensor("self"), tensor("src"), default("dim", I64, "0"),
        optional("start", I64), optional("end", I64),
        default("step", I64, "1")], [result()],
       "`self` with the slice `start:end:step` along `dim` replaced by `src`"),
    op("aten.select_scatter.default", "select_scatter", shape("SelectScatter"),
       [tensor("self"), tensor("src"), attr("dim", I64), attr("index", I64)],
       [result()], "`self` with `self.select(dim, index)` replaced by `src`"),
    op("aten.as_strided_scatter.default", "as_strided_scatter",
       shape("AsStridedScatter"),
       [tensor("self"), tensor("src"), attr("stride", I64S),
        optional("storage_offset", I64)], [result()],
       "`self` with the strided view of `src`'s shape replaced by `src`"),

    # -- Indexing ----------------------------------------------------------
    op("aten.index.Tensor", "index", indexing("Index"),
       [tensor("self"), tensor_list("indices", INDEX_OR_MASK),
        optional("index_positions", I64S)], [result()],
       "Advanced indexing `self[indices]`",
       notes="ATen's `Tensor?[] indices` is the present tensors plus their "
       "positions in the list (`index_positions`, default 0, 1, ...); a "
       "missing position is a full slice."),
    op("aten.index_put.default", "index_put", indexing("IndexPut"),
       [tensor("self"), tensor_list("indices", INDEX_OR_MASK),
        optional("index_positions", I64S), tensor("values"),
        default("accumulate", BOOLATTR, "false")], [result()],
       "`self` with `self[indices]` set to (or, with `accumulate`, "
       "incremented by) `values`"),
    op("aten.index_select.default", "index_select", indexing("IndexSelect"),
       [tensor("self"), attr("dim", I64), tensor("index", INDEX)], [result()],
       "The slices of `self` along `dim` at `index`"),
    op("aten.gather.default", "gather", indexing("Gather"),
       [tensor("self"), attr("dim", I64), tensor("index", INDEX),
        default("sparse_grad", BOOLATTR, "false")], [result()],
       "`self` gathered along `dim` at `index`, in `index`'s shape"),
    op("aten.scatter.src", "scatter", indexing("Scatter"),
       [tensor("self"), attr("dim", I64), tensor("index", INDEX),
        tensor("src")], [result()],
       "`self` with the elements of `src` written along `dim` at `index`"),
    op("aten.scatter.value", "scatter_value", indexing("ScatterValue"),
       [tensor("self"), attr("dim", I64), tensor("index", INDEX),
        attr("value", SCALAR)], [result()],
       "`self` with `value` written along `dim` at `index`"),
    op("aten.scatter_add.default", "scatter_add", indexing("Scatter"),
       [tensor("self"), attr("dim", I64), tensor("index", INDEX),
        tensor("src")], [result()],
       "`self` with the elements of `src` added along `dim` at `index`"),
    op("aten.scatter_reduce.two", "scatter_reduce", indexing("Scatter"),
       [tensor("self"), attr("dim", I64), tensor("index", INDEX),
        tensor("src"), attr("reduce", SCATTER_REDUCE),
        default("include_self", BOOLATTR, "true")], [result()],
       "`self` with the elements of `src` reduced in along `dim` at `index`"),
    op("aten.masked_scatter.default", "masked_scatter",
       indexing("MaskedScatter"),
       [tensor("self"), tensor("mask", BOOL), tensor("source")], [result()],
       "`self` with the elements where `mask` is true taken in order from "
       "`source`",
       notes="`self` and `mask` broadcast."),
    op("aten.embedding.default", "embedding", indexing("Embedding"),
       [tensor("weight"), tensor("indices", INDEX),
        default("padding_idx", I64, "-1"),
        default("scale_grad_by_freq", BOOLATTR, "false"),
        default("sparse", BOOLATTR, "false")], [result()],
       "The rows of `weight` at `indices`"),
    op("aten.embedding_dense_backward.default", "embedding_dense_backward",
       indexing("EmbeddingDenseBackward"),
       [tensor("grad_output", FLOAT), tensor("indices", INDEX),
        attr("padding_idx", I64), attr("scale_grad_by_freq", BOOLATTR)],
       [result("result", FLOAT)],
       "The gradient of `embedding` for its weight",
       notes="ATen's `num_weights` is the result's first size."),

    # -- Pooling and resampling -------------------------------------------
    op("aten.max_pool2d_with_indices.default", "max_pool2d_with_indices",
       pooling("MaxPoolWithIndices", 2),
       [tensor("self", REAL), attr("kernel_size", I64S),
        default("stride", I64S, "{}"), default("padding", I64S, "{0}"),
        default("dilation", I64S, "{1}"),
        default("ceil_mode", BOOLATTR, "false")],
       [result("result", REAL), result("indices", INDEX)],
       "2-d max pooling and the si64 flat indices of the maxima",
       notes="An empty `stride` is the kernel size; one-entry lists apply "
       "to every spatial dimension."),
    op("aten.max_pool2d_with_indices_backward.default",
       "max_pool2d_with_indices_backward",
       pooling("MaxPoolWithIndicesBackward", 2),
       [tensor("grad_output", REAL), tensor("self", REAL),
        attr("kernel_size", I64S), attr("stride", I64S),
        attr("padding", I64S), attr("dilation", I64S),
        attr("ceil_mode", BOOLATTR), tensor("indices", INDEX)],
       [result("result", REAL)], "The gradient of 2-d max pooling"),
    op("aten.max_pool3d_with_indices.default", "max_pool3d_with_indices",
       pooling("MaxPoolWithIndices", 3),
       [tensor("self", REAL), attr("kernel_size", I64S),
        default("stride", I64S, "{}"), default("padding", I64S, "{0}"),
        default("dilation", I64S, "{1}"),
        default("ceil_mode", BOOLATTR, "false")],
       [result("result", REAL), result("indices", INDEX)],
       "3-d max pooling and the si64 flat indices of the maxima"),
    op("aten.avg_pool2d.default", "avg_pool2d", pooling("AvgPool", 2),
       [tensor("self", REAL), attr("kernel_size", I64S),
        default("stride", I64S, "{}"), default("padding", I64S, "{0}"),
        default("ceil_mode", BOOLATTR, "false"),
        default("count_include_pad", BOOLATTR, "true"),
        optional("divisor_override", I64)], [result("result", REAL)],
       "2-d average pooling"),
    op("aten.avg_pool2d_backward.default", "avg_pool2d_backward",
       pooling("AvgPoolBackward", 2),
       [tensor("grad_output", REAL), tensor("self", REAL),
        attr("kernel_size", I64S), attr("stride", I64S),
        attr("padding", I64S), attr("ceil_mode", BOOLATTR),
        attr("count_include_pad", BOOLATTR),
        optional("divisor_override", I64)], [result("result", REAL)],
       "The gradient of 2-d average pooling"),
    op("aten.avg_pool3d.default", "avg_pool3d", pooling("AvgPool", 3),
       [tensor("self", REAL), attr("kernel_size", I64S),
        default("stride", I64S, "{}"), default("padding", I64S, "{0}"),
        default("ceil_mode", BOOLATTR, "false"),
        default("count_include_pad", BOOLATTR, "true"),
        optional("divisor_override", I64)], [result("result", REAL)],
       "3-d average pooling"),
    op("aten._adaptive_avg_pool2d.default", "adaptive_avg_pool2d",
       pooling("AdaptiveAvgPool", 2), [tensor("self", FLOAT)],
       [result("result", FLOAT)],
       "2-d average pooling to the result's spatial size",
       notes="ATen's `output_size` is the result's trailing sizes."),
    op("aten._adaptive_avg_pool2d_backward.default",
       "adaptive_avg_pool2d_backward", pooling("AdaptiveAvgPoolBackward", 2),
       [tensor("grad_output", FLOAT), tensor("self", FLOAT)],
       [result("result", FLOAT)],
       "The gradient of 2-d adaptive average pooling"),
    op("aten._adaptive_avg_pool3d.default", "adaptive_avg_pool3d",
       pooling("AdaptiveAvgPool", 3), [tensor("self", FLOAT)],
       [result("result", FLOAT)],
       "3-d average pooling to the result's spatial size"),
    *(nearest_upsampling(rank, shape) for rank, shape in
      ((1, "[N, C, W]"), (2, "[N, C, H, W]"), (3, "[N, C, D, H, W]"))),
    *(interpolating_upsampling(name, kind, rank, shape)
      for name, kind, rank, shape in
      (("linear1d", "UpsampleLinear", 1, "Linear resampling of [N, C, W]"),
       ("bilinear2d", "UpsampleLinear", 2,
        "Bilinear resampling of [N, C, H, W]"),
       ("trilinear3d", "UpsampleLinear", 3,
        "Trilinear resampling of [N, C, D, H, W]"),
       ("bicubic2d", "UpsampleBicubic", 2,
        "Bicubic resampling of [N, C, H, W]"))),

    op("aten.grid_sampler_2d.default", "grid_sampler_2d",
       pooling("GridSampler", 2),
       [tensor("input", FLOAT), tensor("grid", FLOAT),
        attr("interpolation_mode", I64), attr("padding_mode", I64),
        attr("align_corners", BOOLATTR)], [result("result", FLOAT)],
       "Samples [N, C, H, W] at the normalised coordinates [N, Ho, Wo, 2]"),
    op("aten.col2im.default", "col2im", pooling("Col2Im", 2),
       [tensor("self"), attr("kernel_size", I64S), attr("dilation", I64S),
        attr("padding", I64S), attr("stride", I64S)], [result()],
       "Sums sliding-window columns [N, C * kh * kw, L] into [N, C, H, W]",
       notes="ATen's `output_size` is the result's spatial size."),

    # -- Creation and randomness ------------------------------------------
    op("aten.full.default", "full", creation("Full"),
       [attr("fill_value", SCALAR), optional("dtype", DTYPE), SIZE_SYMBOLS],
       [result()], "A tensor of the result's shape filled with `fill_value`",
       notes="Without `dtype`: bool, si64 or f32 after the fill value."),
    op("aten.full_like.default", "full_like", creation("FullLike"),
       [tensor("self"), attr("fill_value", SCALAR), optional("dtype", DTYPE)],
       [result()], "A tensor of `self`'s shape filled with `fill_value`"),
    op("aten.empty.memory_format", "empty", creation("Empty"),
       [optional("dtype", DTYPE), SIZE_SYMBOLS], [result()],
       "An uninitialised tensor of the result's shape",
       notes="Without `dtype`: f32."),
    op("aten.empty_strided.default", "empty_strided", creation("EmptyStrided"),
       [attr("stride", I64S), optional("dtype", DTYPE)], [result()],
       "An uninitialised tensor of the result's shape with `stride`"),
    op("aten.scalar_tensor.default", "scalar_tensor", creation("ScalarTensor"),
       [optional("s", SCALAR), optional("dtype", DTYPE),
        symbolic_int("dynamic_s")], [result()],
       "A zero-dim tensor holding `s`",
       notes="Without `dtype`: f32, whatever the kind of `s`. A symbolic "
       "`s` (an element count of dynamic sizes) is the operand `dynamic_s` "
       "instead."),
    op("aten.arange.start_step", "arange", creation("Arange"),
       [attr("start", SCALAR), optional("end", SCALAR), optional("step", SCALAR),
        optional("dtype", DTYPE), symbolic_int("dynamic_end")], [result()],
       "`start, start + step, ...` up to `end` (excluded)",
       notes="`step` defaults to 1. Without `dtype`: si64 for integer "
       "bounds, f32 if any is a float. Exactly one of the attribute `end` and "
       "the operand `dynamic_end` (a symbolic end, with integral `start` and "
       "`step`) is given.",
       also={"aten.arange.default": "`start` 0",
             "aten.arange.start": "without `step`"}),
    op("aten.rand.default", "rand", creation("Random"),
       [optional("dtype", DTYPE), *SEED, SIZE_SYMBOLS], [result("result", FLOAT)],
       "Uniform samples in [0, 1) of the result's shape",
       notes="The samples are a function of `seed`, `offset` and the "
       "element's index."),
    op("aten.randn.default", "randn", creation("Random"),
       [optional("dtype", DTYPE), *SEED, SIZE_SYMBOLS], [result("result", FLOAT)],
       "Standard normal samples of the result's shape"),
    op("aten.randperm.default", "randperm", creation("Randperm"),
       [optional("dtype", DTYPE), *SEED], [result("result", REAL)],
       "A random permutation of 0, 1, ..., n - 1",
       notes="ATen's `n` is the result's size; without `dtype`: si64."),
    op("aten.native_dropout.default", "native_dropout",
       creation("NativeDropout"),
       [tensor("input", FLOAT), attr("p", F64), optional("train", BOOLATTR),
        *SEED], [result("output", FLOAT), result("mask", BOOL)],
       "Zeroes elements with probability `p` and scales the rest by "
       "`1 / (1 - p)`; returns the kept-element mask"),
]

# IR examples for the generated documentation, by mnemonic.
EXAMPLES = {
    "add": "%0 = fx.add %a, %b {alpha = 2.0 : f64}\n"
           "    : (tensor<8x1xf32>, tensor<4xf32>) -> tensor<8x4xf32>",
    "mul": "%0 = fx.mul %a, %b : (tensor<?x4xbf16>, tensor<f32>) -> "
           "tensor<?x4xbf16>",
    "neg": "%0 = fx.neg %x : tensor<4x4xf32>",
    "relu": "%0 = fx.relu %x : tensor<?x128xbf16>",
    "gelu": "%0 = fx.gelu %x {approximate = \"tanh\"} : tensor<?x3072xf16>",
    "exp": "%0 = fx.exp %i : (tensor<4xsi64>) -> tensor<4xf32>",
    "add_scalar": "%0 = fx.add_scalar %i {other = 2.5 : f64}\n"
                  "    : (tensor<4xsi32>) -> tensor<4xf32>",
    "where": "%0 = fx.where %mask, %x, %zero\n"
             "    : (tensor<?x1x128xi1>, tensor<?x12x128xf32>, tensor<f32>)\n"
             "    -> tensor<?x12x128xf32>",
    "clamp_tensor": "%0 = fx.clamp_tensor %x max(%limit)\n"
                    "    : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>",
    "to_copy": "%0 = fx.to_copy %x {dtype = bf16} : (tensor<8xf32>) -> "
               "tensor<8xbf16>",
    "sum": "%0 = fx.sum %x {dim = array<i64: -1>, keepdim = true}\n"
           "    : (tensor<?x768xf32>) -> tensor<?x1xf32>",
    "max_dim": "%values, %indices = fx.max_dim %x {dim = 1 : i64}\n"
               "    : (tensor<4x10xf32>) -> (tensor<4xf32>, tensor<4xsi64>)",
    "softmax": "%0 = fx.softmax %x {dim = -1 : i64, half_to_float = false}\n"
               "    : (tensor<?x12x128x128xf32>) -> tensor<?x12x128x128xf32>",
    "native_layer_norm":
        "%out, %mean, %rstd = fx.native_layer_norm %x weight(%w) bias(%b)\n"
        "    {eps = 1.0e-05 : f64, normalized_shape = array<i64: 4096>}\n"
        "    : (tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>)\n"
        "    -> (tensor<?x4096xbf16>, tensor<?x1xf32>, tensor<?x1xf32>)",
    "mm": "%0 = fx.mm %a, %b : (tensor<?x64xf16>, tensor<64x128xf16>) -> "
          "tensor<?x128xf16>",
    "addmm": "%0 = fx.addmm %bias, %x, %w\n"
             "    : (tensor<128xf16>, tensor<?x64xf16>, tensor<64x128xf16>)\n"
             "    -> tensor<?x128xf16>",
    "convolution":
        "%0 = fx.convolution %x, %w bias(%b) {dilation = array<i64: 1, 1>,\n"
        "    groups = 1 : i64, output_padding = array<i64: 0, 0>,\n"
        "    padding = array<i64: 3, 3>, stride = array<i64: 2, 2>,\n"
        "    transposed = false}\n"
        "    : (tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>, "
        "tensor<64xf32>)\n"
        "    -> tensor<?x64x112x112xf32>",
    "view": "%0 = fx.view %x : (tensor<?x128x768xf32>) -> "
            "tensor<?x128x12x64xf32>",
    "permute": "%0 = fx.permute %x {dims = array<i64: 0, 2, 1, 3>}\n"
               "    : (tensor<?x128x12x64xf32>) -> tensor<?x12x128x64xf32>",
    "slice": "%0 = fx.slice %x {dim = 1 : i64, start = 1 : i64}\n"
             "    : (tensor<4x10xf16>) -> tensor<4x9xf16>",
    "cat": "%0 = fx.cat %a, %b {dim = 1 : i64}\n"
           "    : (tensor<4x10xf16>, tensor<4x6xf16>) -> tensor<4x16xf16>",
    "split_with_sizes":
        "%q, %k, %v = fx.split_with_sizes %qkv {dim = 2 : i64}\n"
        "    : (tensor<?x128x2304xf32>)\n"
        "    -> (tensor<?x128x768xf32>, tensor<?x128x768xf32>, "
        "tensor<?x128x768xf32>)",
    "index": "// x[:, i]\n"
             "%0 = fx.index %x, %i {index_positions = array<i64: 1>}\n"
             "    : (tensor<5x6x7xf32>, tensor<3xsi64>) -> tensor<5x3x7xf32>",
    "embedding": "%0 = fx.embedding %w, %ids\n"
                 "    : (tensor<50257x768xf32>, tensor<?x128xsi64>) -> "
                 "tensor<?x128x768xf32>",
    "max_pool2d_with_indices":
        "%out, %indices = fx.max_pool2d_with_indices %x {kernel_size = "
        "array<i64: 3, 3>,\n"
        "    padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}\n"
        "    : (tensor<?x64x112x112xf32>)\n"
        "    -> (tensor<?x64x56x56xf32>, tensor<?x64x56x56xsi64>)",
    "full": "%0 = fx.full {fill_value = 0 : i64} : () -> tensor<?x16xsi64>",
    "arange": "%0 = fx.arange {end = 128 : i64, start = 0 : i64} : () -> "
              "tensor<128xsi64>",
    "native_dropout":
        "%out, %mask = fx.native_dropout %x, %seed\n"
        "    {offset = 0 : i64, p = 0.1 : f64, train = true}\n"
        "    : (tensor<?x768xf16>, tensor<si64>)\n"
        "    -> (tensor<?x768xf16>, tensor<?x768xi1>)",
}

# Ops with a folder (lib/Dialect/FX/IR/FXFolders.cpp): copies and views that
# change nothing fold to their input, views of views to one view.
FOLDERS = [
    "add_scalar",
    "alias",
    "clone",
    "div_scalar",
    "expand",
    "lift_fresh_copy",
    "mul_scalar",
    "permute",
    "pow_tensor_scalar",
    "slice",
    "squeeze",
    "sub_scalar",
    "to_copy",
    "unsafe_view",
    "view",
]
