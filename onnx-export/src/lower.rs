//! Lowering of captured tensor operations to ONNX nodes (opset 18), one Burn operation at a
//! time. Each lowering computes exactly what the Burn operation does; an operation ONNX cannot
//! express exactly is an [`ExportError::UnsupportedOperation`] naming it.

use super::dynamic::{Dim, SymbolicSlice};
use super::graph::{elem_type, ints, onnx_elem_type, Attr, GraphBuilder};
use super::modules;
use super::{scalar_f32, unsupported, variant_name, ExportError};
use burn::tensor::{DType, IndexingUpdateOp};
use burn_ir::{
    ActivationOperationIr, BaseOperationIr, BinaryOpIr, BoolOperationIr, CastOpIr, DimOpIr, FloatOperationIr,
    IntOperationIr, MatmulOpIr, NumericOperationIr, OperationIr, ReduceDimOpIr, ReduceDimWithIndicesOpIr, ScalarIr,
    ScalarOpIr, TensorIr, UnaryOpIr,
};

type Result<T> = std::result::Result<T, ExportError>;

/// Lowers one captured operation into `b`.
pub fn lower(b: &mut GraphBuilder, op: &OperationIr) -> Result<()> {
    match op {
        // Values enter the graph as inputs or initializers when first read; lifetimes are not ops.
        OperationIr::Init(_) | OperationIr::Drop(_) => Ok(()),
        OperationIr::BaseFloat(op) | OperationIr::BaseInt(op) | OperationIr::BaseBool(op) => base(b, op),
        OperationIr::NumericFloat(dtype, op) => numeric(b, op, *dtype),
        OperationIr::NumericInt(dtype, op) => numeric(b, op, *dtype),
        OperationIr::Float(_, op) => float(b, op),
        OperationIr::Int(op) => int(b, op),
        OperationIr::Bool(op) => boolean(b, op),
        OperationIr::Module(op) => modules::lower(b, op),
        OperationIr::Activation(op) => activation(b, op),
        OperationIr::Custom(op) => Err(unsupported(&format!("custom operation `{}`", op.id))),
        OperationIr::Distributed(_) => Err(unsupported("distributed collective")),
    }
}

pub fn unary(b: &mut GraphBuilder, op_type: &str, u: &UnaryOpIr) -> Result<()> {
    let x = b.read(&u.input)?;
    b.op(op_type, vec![x], &u.out, vec![]);
    Ok(())
}

fn binary(b: &mut GraphBuilder, op_type: &str, op: &BinaryOpIr) -> Result<()> {
    let (lhs, rhs) = (b.read(&op.lhs)?, b.read(&op.rhs)?);
    b.op(op_type, vec![lhs, rhs], &op.out, vec![]);
    Ok(())
}

/// A tensor-scalar operation: the scalar becomes a rank-0 constant of the tensor's dtype.
fn with_scalar(b: &mut GraphBuilder, op_type: &str, op: &ScalarOpIr) -> Result<()> {
    let lhs = b.read(&op.lhs)?;
    let rhs = b.scalar(op.rhs, op.lhs.dtype)?;
    b.op(op_type, vec![lhs, rhs], &op.out, vec![]);
    Ok(())
}

fn cast(b: &mut GraphBuilder, op: &CastOpIr) -> Result<()> {
    let x = b.read(&op.input)?;
    b.op("Cast", vec![x], &op.out, vec![("to", Attr::Int(cast_target(op.out.dtype)?))]);
    Ok(())
}

/// The `to` of a Cast to `dtype`.
fn cast_target(dtype: DType) -> Result<i64> {
    Ok(i64::from(elem_type(dtype)?))
}

/// `op_type` whose ONNX output has dtype `produced`, cast to the Burn output's dtype if that differs.
pub fn op_as(
    b: &mut GraphBuilder,
    op_type: &str,
    inputs: Vec<String>,
    out: &TensorIr,
    attrs: Vec<(&str, Attr)>,
    produced: DType,
) -> Result<String> {
    if same_elem(produced, out.dtype) {
        return Ok(b.op(op_type, inputs, out, attrs));
    }
    let value = b.op_temp(op_type, inputs, attrs);
    Ok(b.op("Cast", vec![value], out, vec![("to", Attr::Int(cast_target(out.dtype)?))]))
}

fn same_elem(a: DType, b: DType) -> bool {
    onnx_elem_type(a) == onnx_elem_type(b)
}

fn base(b: &mut GraphBuilder, op: &BaseOperationIr) -> Result<()> {
    match op {
        BaseOperationIr::Reshape(op) => {
            let x = b.read(&op.input)?;
            let shape = b.shape(&op.out, "Reshape")?;
            b.op("Reshape", vec![x, shape], &op.out, vec![]);
        }
        BaseOperationIr::Expand(op) => {
            let x = b.read(&op.input)?;
            let shape = b.shape(&op.out, "Expand")?;
            b.op("Expand", vec![x, shape], &op.out, vec![]);
        }
        BaseOperationIr::SwapDims(op) => {
            let mut perm: Vec<usize> = (0..op.input.shape.len()).collect();
            perm.swap(op.dim1, op.dim2);
            transpose(b, &op.input, &op.out, perm)?;
        }
        BaseOperationIr::Permute(op) => transpose(b, &op.input, &op.out, op.axes.clone())?,
        BaseOperationIr::Flip(op) => {
            let x = b.read(&op.input)?;
            let n = op.axes.len();
            let inputs = vec![
                x,
                b.ints(&vec![-1; n])?,
                b.ints(&vec![i64::MIN; n])?,
                b.ints(&ints(op.axes.iter().copied()))?,
                b.ints(&vec![-1; n])?,
            ];
            b.op("Slice", inputs, &op.out, vec![]);
        }
        BaseOperationIr::Slice(op) => slice(b, &op.tensor, &op.ranges, &op.out)?,
        BaseOperationIr::Select(op) => {
            let (x, indices) = (b.read(&op.tensor)?, b.read(&op.indices)?);
            b.op("Gather", vec![x, indices], &op.out, vec![("axis", Attr::Int(op.dim as i64))]);
        }
        BaseOperationIr::Gather(op) => {
            let (x, indices) = (b.read(&op.tensor)?, b.read(&op.indices)?);
            b.op("GatherElements", vec![x, indices], &op.out, vec![("axis", Attr::Int(op.dim as i64))]);
        }
        BaseOperationIr::Scatter(op) => {
            let reduction = match op.update {
                IndexingUpdateOp::Assign => "none",
                IndexingUpdateOp::Add => "add",
                IndexingUpdateOp::Mul => "mul",
                _ => return Err(unsupported(&format!("scatter with {:?}", op.update))),
            };
            let inputs = vec![b.read(&op.tensor)?, b.read(&op.indices)?, b.read(&op.value)?];
            let attrs = vec![("axis", Attr::Int(op.dim as i64)), ("reduction", Attr::Str(reduction))];
            b.op("ScatterElements", inputs, &op.out, attrs);
        }
        BaseOperationIr::MaskWhere(op) => {
            let inputs = vec![b.read(&op.mask)?, b.read(&op.value)?, b.read(&op.tensor)?];
            b.op("Where", inputs, &op.out, vec![]);
        }
        BaseOperationIr::MaskFill(op) => {
            let inputs = vec![b.read(&op.mask)?, b.scalar(op.value, op.tensor.dtype)?, b.read(&op.tensor)?];
            b.op("Where", inputs, &op.out, vec![]);
        }
        BaseOperationIr::Equal(op) => binary(b, "Equal", op)?,
        BaseOperationIr::EqualElem(op) => with_scalar(b, "Equal", op)?,
        BaseOperationIr::NotEqual(op) => {
            let (lhs, rhs) = (b.read(&op.lhs)?, b.read(&op.rhs)?);
            let equal = b.op_temp("Equal", vec![lhs, rhs], vec![]);
            b.op("Not", vec![equal], &op.out, vec![]);
        }
        BaseOperationIr::NotEqualElem(op) => {
            let (lhs, rhs) = (b.read(&op.lhs)?, b.scalar(op.rhs, op.lhs.dtype)?);
            let equal = b.op_temp("Equal", vec![lhs, rhs], vec![]);
            b.op("Not", vec![equal], &op.out, vec![]);
        }
        BaseOperationIr::RepeatDim(op) => {
            let x = b.read(&op.tensor)?;
            let times = b.symbolic_repeat(&op.out).unwrap_or(Dim::Fixed(op.times as i64));
            let repeats: Vec<Dim> =
                (0..op.tensor.shape.len()).map(|d| if d == op.dim { times.clone() } else { Dim::Fixed(1) }).collect();
            let repeats = b.int_vector(&repeats, "RepeatDim")?;
            b.op("Tile", vec![x, repeats], &op.out, vec![]);
        }
        BaseOperationIr::Cat(op) => {
            let inputs = op.tensors.iter().map(|t| b.read(t)).collect::<Result<_>>()?;
            b.op("Concat", inputs, &op.out, vec![("axis", Attr::Int(op.dim as i64))]);
        }
        BaseOperationIr::Cast(op) => cast(b, op)?,
        BaseOperationIr::Zeros(op) | BaseOperationIr::Empty(op) => fill(b, &op.out, ScalarIr::Float(0.0))?,
        BaseOperationIr::Ones(op) => fill(b, &op.out, ScalarIr::Float(1.0))?,
        BaseOperationIr::All(op) => truth_reduce(b, "ReduceMin", &op.input, None, &op.out)?,
        BaseOperationIr::Any(op) => truth_reduce(b, "ReduceMax", &op.input, None, &op.out)?,
        BaseOperationIr::AllDim(op) => truth_reduce(b, "ReduceMin", &op.input, Some(op.axis), &op.out)?,
        BaseOperationIr::AnyDim(op) => truth_reduce(b, "ReduceMax", &op.input, Some(op.axis), &op.out)?,
        other => return Err(unsupported(&variant_name(other))),
    }
    Ok(())
}

fn transpose(b: &mut GraphBuilder, input: &TensorIr, out: &TensorIr, perm: Vec<usize>) -> Result<()> {
    let x = b.read(input)?;
    b.op("Transpose", vec![x], out, vec![("perm", Attr::Ints(ints(perm)))]);
    Ok(())
}

/// Burn's slice takes `start..end` of each dim and walks it forwards, or backwards from its
/// last element for a negative step; ONNX's Slice takes the first element and the bound to stop at.
fn slice(b: &mut GraphBuilder, input: &TensorIr, ranges: &[burn::tensor::Slice], out: &TensorIr) -> Result<()> {
    let symbolic = b.symbolic_slice(out).map(<[_]>::to_vec).unwrap_or_default();
    let (mut starts, mut ends, mut axes, mut steps) = (vec![], vec![], vec![], vec![]);
    for (axis, slice) in ranges.iter().enumerate() {
        let (start, end, step) = match symbolic.get(axis).cloned().flatten() {
            Some(SymbolicSlice::Whole) => continue,
            Some(SymbolicSlice::Range(start, end)) => (start, end, 1),
            None => {
                let size = input.shape[axis];
                let (range, step) = slice.to_range_and_step(size);
                if range.start == 0 && range.end == size && step == 1 {
                    continue;
                }
                let (start, end, step) = fixed_bounds(range, step);
                (Dim::Fixed(start), Dim::Fixed(end), step)
            }
        };
        starts.push(start);
        ends.push(end);
        axes.push(Dim::Fixed(axis as i64));
        steps.push(Dim::Fixed(step));
    }
    let x = b.read(input)?;
    if axes.is_empty() {
        b.op("Identity", vec![x], out, vec![]);
        return Ok(());
    }
    let inputs = vec![
        x,
        b.int_vector(&starts, "Slice")?,
        b.int_vector(&ends, "Slice")?,
        b.int_vector(&axes, "Slice")?,
        b.int_vector(&steps, "Slice")?,
    ];
    b.op("Slice", inputs, out, vec![]);
    Ok(())
}

/// ONNX's first element, stop bound and step for Burn's `range` walked with `step`.
fn fixed_bounds(range: std::ops::Range<usize>, step: isize) -> (i64, i64, i64) {
    if range.start >= range.end {
        (0, 0, 1)
    } else if step > 0 {
        (range.start as i64, range.end as i64, step as i64)
    } else if range.start == 0 {
        (range.end as i64 - 1, i64::MIN, step as i64)
    } else {
        (range.end as i64 - 1, range.start as i64 - 1, step as i64)
    }
}

/// A tensor of `out`'s shape and dtype filled with `value`, made at run time (no weight stored).
fn fill(b: &mut GraphBuilder, out: &TensorIr, value: ScalarIr) -> Result<()> {
    let shape = b.shape(out, "Full")?;
    let one = b.filled(value, &[1], out.dtype)?;
    b.op("Expand", vec![one, shape], out, vec![]);
    Ok(())
}

/// A reduction with ONNX's `keepdims = 1` over `axes` (all when `None`), reshaped to Burn's
/// output where that differs (a full reduction is a one-element tensor of rank 1 in Burn).
pub fn reduce(b: &mut GraphBuilder, op_type: &str, x: String, axes: Option<&[usize]>, out: &TensorIr) -> Result<()> {
    let value = reduced(b, op_type, x, axes, &out.shape)?;
    b.alias(out, &value);
    Ok(())
}

fn reduced(b: &mut GraphBuilder, op_type: &str, x: String, axes: Option<&[usize]>, shape: &[usize]) -> Result<String> {
    let mut inputs = vec![x];
    if let Some(axes) = axes {
        inputs.push(b.ints(&ints(axes.iter().copied()))?);
    }
    let value = b.op_temp(op_type, inputs, vec![("keepdims", Attr::Int(1))]);
    if axes.is_some() {
        return Ok(value);
    }
    let shape = b.ints(&ints(shape.iter().copied()))?;
    Ok(b.op_temp("Reshape", vec![value, shape], vec![]))
}

/// `all`/`any`: the input as 0/1 integers, reduced with min/max, back to booleans.
fn truth_reduce(
    b: &mut GraphBuilder,
    op_type: &str,
    input: &TensorIr,
    axis: Option<usize>,
    out: &TensorIr,
) -> Result<()> {
    let x = b.read(input)?;
    let truth = if matches!(input.dtype, DType::Bool(_)) {
        x
    } else {
        let zero = b.scalar(ScalarIr::Int(0), input.dtype)?;
        let equal = b.op_temp("Equal", vec![x, zero], vec![]);
        b.op_temp("Not", vec![equal], vec![])
    };
    let as_int = b.op_temp("Cast", vec![truth], vec![("to", Attr::Int(cast_target(DType::I32)?))]);
    let axes = axis.map(|a| [a]);
    let value = reduced(b, op_type, as_int, axes.as_ref().map(|a| &a[..]), &out.shape)?;
    b.op("Cast", vec![value], out, vec![("to", Attr::Int(cast_target(out.dtype)?))]);
    Ok(())
}

fn numeric(b: &mut GraphBuilder, op: &NumericOperationIr, dtype: DType) -> Result<()> {
    use NumericOperationIr as N;
    match op {
        N::Add(op) => binary(b, "Add", op)?,
        N::Sub(op) => binary(b, "Sub", op)?,
        N::Mul(op) => binary(b, "Mul", op)?,
        N::Div(op) => binary(b, "Div", op)?,
        N::AddScalar(op) => with_scalar(b, "Add", op)?,
        N::SubScalar(op) => with_scalar(b, "Sub", op)?,
        N::MulScalar(op) => with_scalar(b, "Mul", op)?,
        N::DivScalar(op) => with_scalar(b, "Div", op)?,
        N::Rem(op) => {
            let (lhs, rhs) = (b.read(&op.lhs)?, b.read(&op.rhs)?);
            remainder(b, lhs, rhs, &op.out, dtype)?;
        }
        N::RemScalar(op) => {
            let (lhs, rhs) = (b.read(&op.lhs)?, b.scalar(op.rhs, op.lhs.dtype)?);
            remainder(b, lhs, rhs, &op.out, dtype)?;
        }
        N::Abs(op) => unary(b, "Abs", op)?,
        N::Neg(op) => unary(b, "Neg", op)?,
        N::Sign(op) => unary(b, "Sign", op)?,
        N::Full(op) => fill(b, &op.out, op.value)?,
        N::MeanDim(op) => reduce_dim(b, "ReduceMean", op)?,
        N::SumDim(op) => reduce_dim(b, "ReduceSum", op)?,
        N::ProdDim(op) => reduce_dim(b, "ReduceProd", op)?,
        N::MaxDim(op) => reduce_dim(b, "ReduceMax", op)?,
        N::MinDim(op) => reduce_dim(b, "ReduceMin", op)?,
        N::SumDims(op) => {
            let x = b.read(&op.input)?;
            reduce(b, "ReduceSum", x, Some(&op.axes[..]), &op.out)?;
        }
        N::Mean(op) => reduce_all(b, "ReduceMean", &op.input, &op.out)?,
        N::Sum(op) => reduce_all(b, "ReduceSum", &op.input, &op.out)?,
        N::Prod(op) => reduce_all(b, "ReduceProd", &op.input, &op.out)?,
        N::Max(op) => reduce_all(b, "ReduceMax", &op.input, &op.out)?,
        N::Min(op) => reduce_all(b, "ReduceMin", &op.input, &op.out)?,
        N::MaxAbs(op) => {
            let x = b.read(&op.input)?;
            let abs = b.op_temp("Abs", vec![x], vec![]);
            reduce(b, "ReduceMax", abs, None, &op.out)?;
        }
        N::MaxAbsDim(op) => {
            let x = b.read(&op.input)?;
            let abs = b.op_temp("Abs", vec![x], vec![]);
            reduce(b, "ReduceMax", abs, Some(&[op.axis][..]), &op.out)?;
        }
        N::ArgMax(op) => arg_reduce(b, "ArgMax", op)?,
        N::ArgMin(op) => arg_reduce(b, "ArgMin", op)?,
        N::MaxDimWithIndices(op) => with_indices(b, "ReduceMax", "ArgMax", op)?,
        N::MinDimWithIndices(op) => with_indices(b, "ReduceMin", "ArgMin", op)?,
        N::Greater(op) => binary(b, "Greater", op)?,
        N::GreaterEqual(op) => binary(b, "GreaterOrEqual", op)?,
        N::Lower(op) => binary(b, "Less", op)?,
        N::LowerEqual(op) => binary(b, "LessOrEqual", op)?,
        N::GreaterElem(op) => with_scalar(b, "Greater", op)?,
        N::GreaterEqualElem(op) => with_scalar(b, "GreaterOrEqual", op)?,
        N::LowerElem(op) => with_scalar(b, "Less", op)?,
        N::LowerEqualElem(op) => with_scalar(b, "LessOrEqual", op)?,
        N::Clamp(op) => {
            let inputs =
                vec![b.read(&op.tensor)?, b.scalar(op.min, op.tensor.dtype)?, b.scalar(op.max, op.tensor.dtype)?];
            b.op("Clip", inputs, &op.out, vec![]);
        }
        N::ClampMin(op) => with_scalar(b, "Max", op)?,
        N::ClampMax(op) => with_scalar(b, "Min", op)?,
        N::Powi(op) => binary(b, "Pow", op)?,
        N::PowiScalar(op) => with_scalar(b, "Pow", op)?,
        N::CumSum(op) => {
            let x = b.read(&op.input)?;
            let axis = b.scalar(ScalarIr::Int(op.axis as i64), DType::I64)?;
            b.op("CumSum", vec![x, axis], &op.out, vec![]);
        }
        N::Pad(op) => modules::pad(b, op)?,
        other => return Err(unsupported(&variant_name(other))),
    }
    Ok(())
}

/// `max_dim_with_indices` and friends: the reduction and the arg-reduction of one dim.
fn with_indices(b: &mut GraphBuilder, reduce_op: &str, arg_op: &str, op: &ReduceDimWithIndicesOpIr) -> Result<()> {
    let x = b.read(&op.tensor)?;
    reduce(b, reduce_op, x.clone(), Some(&[op.dim][..]), &op.out)?;
    let attrs = vec![("axis", Attr::Int(op.dim as i64)), ("keepdims", Attr::Int(1))];
    op_as(b, arg_op, vec![x], &op.out_indices, attrs, DType::I64)?;
    Ok(())
}

/// Burn's remainder has the divisor's sign (Python's `%`): ONNX `Mod` with `fmod = 0` for
/// integers; for floats ONNX only has C's `fmod`, so `x - floor(x / y) * y`.
fn remainder(b: &mut GraphBuilder, lhs: String, rhs: String, out: &TensorIr, dtype: DType) -> Result<()> {
    if !dtype.is_float() {
        b.op("Mod", vec![lhs, rhs], out, vec![("fmod", Attr::Int(0))]);
        return Ok(());
    }
    let quotient = b.op_temp("Div", vec![lhs.clone(), rhs.clone()], vec![]);
    let floor = b.op_temp("Floor", vec![quotient], vec![]);
    let multiple = b.op_temp("Mul", vec![floor, rhs], vec![]);
    b.op("Sub", vec![lhs, multiple], out, vec![]);
    Ok(())
}

fn reduce_dim(b: &mut GraphBuilder, op_type: &str, op: &ReduceDimOpIr) -> Result<()> {
    let x = b.read(&op.input)?;
    reduce(b, op_type, x, Some(&[op.axis][..]), &op.out)
}

fn reduce_all(b: &mut GraphBuilder, op_type: &str, input: &TensorIr, out: &TensorIr) -> Result<()> {
    let x = b.read(input)?;
    reduce(b, op_type, x, None, out)
}

fn arg_reduce(b: &mut GraphBuilder, op_type: &str, op: &ReduceDimOpIr) -> Result<()> {
    let x = b.read(&op.input)?;
    let attrs = vec![("axis", Attr::Int(op.axis as i64)), ("keepdims", Attr::Int(1))];
    op_as(b, op_type, vec![x], &op.out, attrs, DType::I64)?;
    Ok(())
}

fn float(b: &mut GraphBuilder, op: &FloatOperationIr) -> Result<()> {
    if let Some((op_type, u)) = float_unary(op) {
        return unary(b, op_type, u);
    }
    match op {
        FloatOperationIr::PowfScalar(op) => with_scalar(b, "Pow", op),
        FloatOperationIr::Powf(op) => binary(b, "Pow", op),
        FloatOperationIr::IntoInt(op) => cast(b, op),
        FloatOperationIr::Matmul(op) => matmul(b, op),
        // Log1p, Trunc, ArcTan2, Hypot, Cross, Random, (de)quantization, GridSample: no exact
        // opset-18 counterpart.
        other => Err(unsupported(&variant_name(other))),
    }
}

/// Float operations that are one ONNX op of the same name, elementwise.
fn float_unary(op: &FloatOperationIr) -> Option<(&'static str, &UnaryOpIr)> {
    use FloatOperationIr as F;
    Some(match op {
        F::Exp(u) => ("Exp", u),
        F::Log(u) => ("Log", u),
        F::Erf(u) => ("Erf", u),
        F::Sqrt(u) => ("Sqrt", u),
        F::Cos(u) => ("Cos", u),
        F::Cosh(u) => ("Cosh", u),
        F::Sin(u) => ("Sin", u),
        F::Sinh(u) => ("Sinh", u),
        F::Tan(u) => ("Tan", u),
        F::Tanh(u) => ("Tanh", u),
        F::ArcCos(u) => ("Acos", u),
        F::ArcCosh(u) => ("Acosh", u),
        F::ArcSin(u) => ("Asin", u),
        F::ArcSinh(u) => ("Asinh", u),
        F::ArcTan(u) => ("Atan", u),
        F::ArcTanh(u) => ("Atanh", u),
        F::Round(u) => ("Round", u),
        F::Floor(u) => ("Floor", u),
        F::Ceil(u) => ("Ceil", u),
        F::Recip(u) => ("Reciprocal", u),
        F::IsNan(u) => ("IsNaN", u),
        F::IsInf(u) => ("IsInf", u),
        _ => return None,
    })
}

fn matmul(b: &mut GraphBuilder, op: &MatmulOpIr) -> Result<()> {
    let (lhs, rhs) = (b.read(&op.lhs)?, b.read(&op.rhs)?);
    b.op("MatMul", vec![lhs, rhs], &op.out, vec![]);
    Ok(())
}

fn int(b: &mut GraphBuilder, op: &IntOperationIr) -> Result<()> {
    use IntOperationIr as I;
    match op {
        I::IntoFloat(op) => cast(b, op),
        I::BitwiseAnd(op) => binary(b, "BitwiseAnd", op),
        I::BitwiseOr(op) => binary(b, "BitwiseOr", op),
        I::BitwiseXor(op) => binary(b, "BitwiseXor", op),
        I::BitwiseAndScalar(op) => with_scalar(b, "BitwiseAnd", op),
        I::BitwiseOrScalar(op) => with_scalar(b, "BitwiseOr", op),
        I::BitwiseXorScalar(op) => with_scalar(b, "BitwiseXor", op),
        I::BitwiseNot(op) => unary(b, "BitwiseNot", op),
        I::Matmul(op) => matmul(b, op),
        // ONNX's BitShift is defined for unsigned integers only.
        other => Err(unsupported(&variant_name(other))),
    }
}

fn boolean(b: &mut GraphBuilder, op: &BoolOperationIr) -> Result<()> {
    match op {
        BoolOperationIr::IntoFloat(op) | BoolOperationIr::IntoInt(op) => cast(b, op),
        BoolOperationIr::Not(op) => unary(b, "Not", op),
        BoolOperationIr::And(op) => binary(b, "And", op),
        BoolOperationIr::Or(op) => binary(b, "Or", op),
        BoolOperationIr::Xor(op) => binary(b, "Xor", op),
    }
}

fn activation(b: &mut GraphBuilder, op: &ActivationOperationIr) -> Result<()> {
    use ActivationOperationIr as A;
    match op {
        A::Relu(op) => unary(b, "Relu", op),
        A::Sigmoid(op) => unary(b, "Sigmoid", op),
        A::LeakyRelu(op) => {
            let x = b.read(&op.lhs)?;
            b.op("LeakyRelu", vec![x], &op.out, vec![("alpha", Attr::Float(scalar_f32(op.rhs)))]);
            Ok(())
        }
        A::PRelu(op) => modules::prelu(b, op),
        A::Gelu(op) => modules::gelu(b, op),
        A::HardSigmoid(op) => {
            let x = b.read(&op.tensor)?;
            let attrs = vec![("alpha", Attr::Float(scalar_f32(op.alpha))), ("beta", Attr::Float(scalar_f32(op.beta)))];
            b.op("HardSigmoid", vec![x], &op.out, attrs);
            Ok(())
        }
        A::LogSigmoid(op) => {
            // log σ(x) = -softplus(-x).
            let x = b.read(&op.input)?;
            let negated = b.op_temp("Neg", vec![x], vec![]);
            let softplus = b.op_temp("Softplus", vec![negated], vec![]);
            b.op("Neg", vec![softplus], &op.out, vec![]);
            Ok(())
        }
        A::Softmax(op) => softmax(b, "Softmax", op, false),
        A::LogSoftmax(op) => softmax(b, "LogSoftmax", op, false),
        A::Softmin(op) => softmax(b, "Softmax", op, true),
        other => Err(unsupported(&variant_name(other))),
    }
}

/// Softmax or log-softmax over one axis; softmin is the softmax of the negated input.
fn softmax(b: &mut GraphBuilder, op_type: &str, op: &DimOpIr, negate: bool) -> Result<()> {
    let mut x = b.read(&op.input)?;
    if negate {
        x = b.op_temp("Neg", vec![x], vec![]);
    }
    b.op(op_type, vec![x], &op.out, vec![("axis", Attr::Int(op.axis as i64))]);
    Ok(())
}
