//! Constant folding: a node whose inputs are all known at import time is evaluated here, so
//! shape computations (Shape → Slice → Concat → Reshape chains, expanded functions) become
//! constants and the ops that need them (Reshape, ConstantOfShape, Reduce axes) see static
//! values. Only ops whose results are exact on f64 are evaluated (integer math, data movement),
//! and only small tensors.

use crate::ops::{
    BinaryOp, CastConfig, ConcatConfig, ConstantOfShapeConfig, GatherConfig, IdentityConfig, IntsInput, Op,
    TransposeConfig, UnaryOp, VariadicOp, WhereConfig,
};
use crate::tensor::{TensorData, MAX_FOLDED_ELEMENTS as MAX_ELEMENTS};
use crate::types::{DType, Kind, TensorType};

/// A dense n-d array of values widened to f64 (exact for every integer below 2^53).
#[derive(Debug, Clone)]
struct Array {
    shape: Vec<usize>,
    values: Vec<f64>,
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

impl Array {
    fn of(data: &TensorData) -> Option<Self> {
        Some(Self { shape: data.shape.clone(), values: data.to_f64s()? })
    }

    /// Reads the element at a multi-index broadcast into `shape` (right-aligned, size-1 stretched).
    fn broadcast_to(&self, shape: &[usize]) -> Vec<f64> {
        let out_strides = strides(shape);
        let in_strides = strides(&self.shape);
        let offset = shape.len() - self.shape.len();
        let n: usize = shape.iter().product();
        (0..n)
            .map(|flat| {
                let mut src = 0;
                for (axis, &dim) in self.shape.iter().enumerate() {
                    let coord = (flat / out_strides[axis + offset]) % shape[axis + offset];
                    if dim != 1 {
                        src += coord * in_strides[axis];
                    }
                }
                self.values[src]
            })
            .collect()
    }
}

fn encode(values: &[f64], shape: Vec<usize>, dtype: DType) -> TensorData {
    // Integers go through i64 and then wrap into narrower types, as ONNX's integer casts and
    // arithmetic do (a direct `f64 as u8` would saturate: 300 would become 255, not 44).
    let int = |v: f64| v as i64;
    let bytes = match dtype {
        DType::F32 => values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
        DType::F64 => values.iter().flat_map(|&v| v.to_le_bytes()).collect(),
        DType::I64 => values.iter().flat_map(|&v| int(v).to_le_bytes()).collect(),
        DType::I32 => values.iter().flat_map(|&v| (int(v) as i32).to_le_bytes()).collect(),
        DType::I16 => values.iter().flat_map(|&v| (int(v) as i16).to_le_bytes()).collect(),
        DType::U16 => values.iter().flat_map(|&v| (int(v) as u16).to_le_bytes()).collect(),
        DType::U32 => values.iter().flat_map(|&v| (int(v) as u32).to_le_bytes()).collect(),
        DType::U64 => values.iter().flat_map(|&v| (int(v) as u64).to_le_bytes()).collect(),
        DType::I8 => values.iter().map(|&v| int(v) as i8 as u8).collect(),
        DType::U8 => values.iter().map(|&v| int(v) as u8).collect(),
        DType::Bool => values.iter().map(|&v| (v != 0.0) as u8).collect(),
        // Half floats and the low-bit types are not folded (see `foldable_dtype`).
        _ => Vec::new(),
    };
    TensorData::new(dtype, shape, bytes)
}

/// Whether a shape is small enough to fold: its element count, and every partial product the
/// folders take of it (strides, outer and inner block sizes), within [`MAX_ELEMENTS`]. Zero
/// dims count as one: `[0, 2^40, 2^40]` holds nothing, but its strides still overflow.
fn within_budget(shape: &[usize]) -> bool {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d.max(1))).is_some_and(|n| n <= MAX_ELEMENTS)
}

/// Not the half floats, nor the low-bit types (a cast to them rounds in ways f64 arithmetic
/// does not).
fn foldable_dtype(dtype: DType) -> bool {
    !matches!(dtype, DType::F16 | DType::BF16) && !dtype.is_low_bit()
}

fn binary(op: BinaryOp, a: f64, b: f64, int: bool) -> Option<f64> {
    let truth = |c: bool| if c { 1.0 } else { 0.0 };
    Some(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div if int => {
            if b == 0.0 {
                return None;
            }
            (a / b).trunc()
        }
        BinaryOp::Div => a / b,
        // Exact in f64 (`%` is C's fmod); without `fmod` the remainder takes the divisor's sign.
        BinaryOp::Mod { fmod } => {
            if b == 0.0 {
                return None;
            }
            let r = a % b;
            if fmod || r == 0.0 || (r < 0.0) == (b < 0.0) {
                r
            } else {
                r + b
            }
        }
        BinaryOp::Equal => truth(a == b),
        BinaryOp::Less => truth(a < b),
        BinaryOp::LessOrEqual => truth(a <= b),
        BinaryOp::Greater => truth(a > b),
        BinaryOp::GreaterOrEqual => truth(a >= b),
        BinaryOp::And => truth(a != 0.0 && b != 0.0),
        BinaryOp::Or => truth(a != 0.0 || b != 0.0),
        BinaryOp::Xor => truth((a != 0.0) != (b != 0.0)),
        _ => return None,
    })
}

fn unary(op: UnaryOp, v: f64) -> Option<f64> {
    Some(match op {
        UnaryOp::Neg => -v,
        UnaryOp::Abs => v.abs(),
        UnaryOp::Ceil => v.ceil(),
        UnaryOp::Floor => v.floor(),
        UnaryOp::Sign => v.signum() * (v != 0.0) as u8 as f64,
        UnaryOp::Not => (v == 0.0) as u8 as f64,
        UnaryOp::Relu => v.max(0.0),
        // Exact for f32 too: a square root rounded to f64, then to f32, is the f32 one.
        UnaryOp::Sqrt => v.sqrt(),
        _ => return None,
    })
}

/// Concatenation of same-rank arrays along `axis`.
fn concat(arrays: &[Array], axis: usize) -> Array {
    let mut shape = arrays[0].shape.clone();
    shape[axis] = arrays.iter().map(|a| a.shape[axis]).sum();
    let outer: usize = shape[..axis].iter().product();
    let mut values = Vec::with_capacity(shape.iter().product());
    for o in 0..outer {
        for a in arrays {
            let block: usize = a.shape[axis..].iter().product();
            values.extend_from_slice(&a.values[o * block..(o + 1) * block]);
        }
    }
    Array { shape, values }
}

/// Picks `indices` (negative from the end) along `axis`.
fn gather(data: &Array, indices: &Array, axis: usize) -> Option<Array> {
    let dim = data.shape[axis] as i64;
    let outer: usize = data.shape[..axis].iter().product();
    let inner: usize = data.shape[axis + 1..].iter().product();
    let mut values = vec![];
    for o in 0..outer {
        for &i in &indices.values {
            let i = i as i64;
            let i = if i < 0 { i + dim } else { i };
            if !(0..dim).contains(&i) {
                return None;
            }
            let start = (o * dim as usize + i as usize) * inner;
            values.extend_from_slice(&data.values[start..start + inner]);
        }
    }
    let mut shape = data.shape[..axis].to_vec();
    shape.extend(&indices.shape);
    shape.extend(&data.shape[axis + 1..]);
    Some(Array { shape, values })
}

/// Elements along each axis selected by ONNX Slice semantics.
fn slice(x: &Array, starts: &[i64], ends: &[i64], axes: &[i64], steps: &[i64]) -> Option<Array> {
    let rank = x.shape.len();
    let mut picks: Vec<Vec<usize>> = x.shape.iter().map(|&d| (0..d).collect()).collect();
    for (i, &start) in starts.iter().enumerate() {
        let axis = axes.get(i).map_or(i as i64, |&a| if a < 0 { a + rank as i64 } else { a }) as usize;
        let step = steps.get(i).copied().unwrap_or(1);
        // i128: starts, ends and steps are any i64, and `k + step` must not overflow.
        let dim = *x.shape.get(axis)? as i128;
        let (start, end, step) = (start as i128, *ends.get(i)? as i128, step as i128);
        let norm = |v: i128| if v < 0 { v + dim } else { v };
        let mut chosen = vec![];
        if step > 0 {
            let (mut k, end) = (norm(start).clamp(0, dim), norm(end).clamp(0, dim));
            while k < end {
                chosen.push(k as usize);
                k += step;
            }
        } else if step < 0 {
            let (mut k, end) = (norm(start).clamp(-1, dim - 1), norm(end).clamp(-1, dim - 1));
            while k > end {
                chosen.push(k as usize);
                k += step;
            }
        } else {
            return None;
        }
        picks[axis] = chosen;
    }
    let shape: Vec<usize> = picks.iter().map(Vec::len).collect();
    let in_strides = strides(&x.shape);
    let out_strides = strides(&shape);
    let n: usize = shape.iter().product();
    let values = (0..n)
        .map(|flat| {
            let src: usize = (0..rank).map(|a| picks[a][(flat / out_strides[a]) % shape[a]] * in_strides[a]).sum();
            x.values[src]
        })
        .collect();
    Some(Array { shape, values })
}

fn transpose(x: &Array, perm: &[usize]) -> Array {
    let shape: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
    let in_strides = strides(&x.shape);
    let out_strides = strides(&shape);
    let n: usize = shape.iter().product();
    let values = (0..n)
        .map(|flat| {
            let src: usize =
                perm.iter().enumerate().map(|(o, &p)| ((flat / out_strides[o]) % shape[o]) * in_strides[p]).sum();
            x.values[src]
        })
        .collect();
    Array { shape, values }
}

/// Evaluates `op` on constant `inputs` when it is one of the folded ops; `out` is the inferred
/// output type (its static shape drives the pure reshaping ops).
pub fn eval(op: &Op, inputs: &[&TensorData], out: &[TensorType]) -> Option<Vec<TensorData>> {
    // Constant weights of any size (see `dequantize_constant`).
    if let (Op::Quantize(c), [x, scale, zero @ ..]) = (op, inputs) {
        return crate::ops::quantize::dequantize_constant(c, x, scale, zero.first().copied()).map(|d| vec![d]);
    }
    if inputs.iter().any(|t| !within_budget(&t.shape) || !foldable_dtype(t.dtype)) {
        return None;
    }
    let [out_ty] = out else { return None };
    if !foldable_dtype(out_ty.dtype) || out_ty.static_shape().is_some_and(|s| !within_budget(&s)) {
        return None;
    }
    let arrays: Vec<Array> = inputs.iter().map(|t| Array::of(t)).collect::<Option<_>>()?;
    let out_shape = out_ty.static_shape();
    let int = out_ty.dtype.kind() != Kind::Float;
    let result: Array = match op {
        Op::Identity(IdentityConfig)
        | Op::Reshape(_)
        | Op::Squeeze(_)
        | Op::Unsqueeze(_)
        | Op::Flatten(_)
        | Op::ReshapeRuntime(_) => Array { shape: out_shape?, values: arrays[0].values.clone() },
        Op::Cast(CastConfig { to, .. }) => {
            // To bool every non-zero value is true (0.5 too), so only integer targets truncate.
            let values = arrays[0].values.iter().map(|&v| if to.kind() == Kind::Int { v.trunc() } else { v }).collect();
            Array { shape: arrays[0].shape.clone(), values }
        }
        Op::Binary(c) if c.legacy_axis.is_none() => {
            let shape = out_shape?;
            let operand_int = inputs[0].dtype.kind() != Kind::Float;
            let (a, b) = (arrays[0].broadcast_to(&shape), arrays[1].broadcast_to(&shape));
            let values =
                a.iter().zip(&b).map(|(&x, &y)| binary(c.op, x, y, operand_int)).collect::<Option<Vec<_>>>()?;
            Array { shape, values }
        }
        Op::Unary(u) => Array {
            shape: arrays[0].shape.clone(),
            values: arrays[0].values.iter().map(|&v| unary(*u, v)).collect::<Option<_>>()?,
        },
        Op::Variadic(v) if *v != VariadicOp::Mean => {
            let shape = out_shape?;
            let mut acc = arrays[0].broadcast_to(&shape);
            for a in &arrays[1..] {
                for (x, y) in acc.iter_mut().zip(a.broadcast_to(&shape)) {
                    *x = match v {
                        VariadicOp::Max => x.max(y),
                        VariadicOp::Min => x.min(y),
                        _ => *x + y,
                    };
                }
            }
            Array { shape, values: acc }
        }
        Op::Where(WhereConfig) => {
            let shape = out_shape?;
            let (c, x, y) =
                (arrays[0].broadcast_to(&shape), arrays[1].broadcast_to(&shape), arrays[2].broadcast_to(&shape));
            Array {
                values: c.iter().zip(x.iter().zip(&y)).map(|(&c, (&x, &y))| if c != 0.0 { x } else { y }).collect(),
                shape,
            }
        }
        Op::Concat(ConcatConfig { axis }) => concat(&arrays, *axis),
        Op::Gather(GatherConfig { axis }) => gather(&arrays[0], &arrays[1], *axis)?,
        Op::Transpose(TransposeConfig { perm }) => transpose(&arrays[0], perm),
        Op::Expand(_) => {
            let shape = out_shape?;
            Array { values: arrays[0].broadcast_to(&shape), shape }
        }
        Op::Slice(c) => {
            let list = |i: &Option<IntsInput>| i.as_ref().and_then(IntsInput::as_static).map(<[i64]>::to_vec);
            let (starts, ends) = (c.starts.as_static()?, c.ends.as_static()?);
            let axes = match &c.axes {
                None => vec![],
                some => list(some)?,
            };
            let steps = match &c.steps {
                None => vec![],
                some => list(some)?,
            };
            slice(&arrays[0], starts, ends, &axes, &steps)?
        }
        Op::ConstantOfShape(ConstantOfShapeConfig { value, .. }) => {
            let shape = out_shape?;
            let n = shape.iter().product();
            Array { shape, values: vec![*value; n] }
        }
        _ => return None,
    };
    if int && result.values.iter().any(|v| v.fract() != 0.0 && v.is_finite()) && out_ty.dtype != DType::Bool {
        return None;
    }
    let shape = result.shape.clone();
    Some(vec![encode(&result.values, shape, out_ty.dtype)])
}
