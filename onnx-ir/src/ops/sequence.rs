//! Sequences and optionals: `SequenceEmpty`, `SequenceConstruct`, `SequenceInsert`,
//! `SequenceAt`, `SequenceErase`, `SequenceLength`, `SplitToSequence`, `ConcatFromSequence`,
//! `Optional`,
//! `OptionalHasElement` and `OptionalGetElement`, at every opset they exist in (11 on; the
//! optionals 15 on, plain tensor and sequence inputs to the last two 18 on).
//!
//! A sequence's tensors share one dtype and rank, which must be known at import (the Rust type
//! is a `Vec` of one tensor type); their dims may differ. A sequence made by `SequenceEmpty`
//! is [`Holder::EmptySequence`] until a tensor is inserted, which fixes its rank.

use super::InferOp;
use super::{IdentityConfig, NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::tensor::TensorData;
use crate::types::{DType, Dim, Holder, Kind, TensorType};

/// A sequence or optional op (all but `SequenceMap`, a subgraph op: [`Op::SequenceMap`], parsed
/// with the other control flow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SequenceOp {
    /// `SequenceEmpty`: no tensor yet, of this dtype.
    Empty {
        /// `dtype` (default float).
        dtype: DType,
    },
    /// `SequenceConstruct(tensors...)`.
    Construct,
    /// `SequenceInsert(sequence, tensor, position?)`: at the end without a position.
    Insert,
    /// `SequenceAt(sequence, position)`.
    At,
    /// `SequenceErase(sequence, position?)`: the last tensor without a position.
    Erase,
    /// `SequenceLength(sequence)`: an i64 scalar.
    Length,
    /// `SplitToSequence(input, split?)` along `axis`; without `split`, one tensor per index,
    /// the axis removed unless `keepdims`. `split` is a scalar (parts of that size, the last
    /// smaller) or a list of sizes, read at run time.
    SplitToSequence {
        /// `axis` (default 0), normalised.
        axis: usize,
        /// `keepdims` (default 1), for the split without `split`.
        keepdims: bool,
    },
    /// `ConcatFromSequence(sequence)` along `axis`, or stacked along a new `axis`.
    ConcatFromSequence {
        /// `axis`, normalised (against the output's rank with `new_axis`).
        axis: usize,
        /// `new_axis` (default 0): stack rather than concatenate.
        new_axis: bool,
    },
    /// `Optional(input)`: an optional holding the input.
    Wrap,
    /// `Optional()` with its `type`: an optional holding nothing.
    None {
        /// The type of the element it would hold (the `type` attribute).
        ty: TensorType,
    },
    /// `OptionalHasElement(optional)`: a bool scalar.
    HasElement,
    /// `OptionalGetElement(optional)`: what it holds (an error at run time if nothing).
    GetElement,
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let op = match ctx.op_type {
        "SequenceEmpty" => {
            let code = ctx.attrs.int_or("dtype", 1)?;
            let dtype = i32::try_from(code)
                .ok()
                .and_then(DType::from_onnx)
                .ok_or_else(|| ctx.error(format!("dtype {code} is not supported")))?;
            return Ok(Parsed::new(Op::Sequence(SequenceOp::Empty { dtype }), 0));
        }
        "SequenceConstruct" => SequenceOp::Construct,
        "SequenceInsert" => SequenceOp::Insert,
        "SequenceAt" => SequenceOp::At,
        "SequenceErase" => SequenceOp::Erase,
        "SequenceLength" if sequence(ctx)?.holder == Holder::EmptySequence => {
            return Ok(Parsed::folded(TensorData::new(DType::I64, vec![], 0i64.to_le_bytes().to_vec())));
        }
        "SequenceLength" => SequenceOp::Length,
        "SplitToSequence" => {
            let rank = ctx.input_type(0)?.rank();
            let axis = super::common::normalize_axis(ctx.attrs.int_or("axis", 0)?, rank).map_err(|m| ctx.error(m))?;
            SequenceOp::SplitToSequence { axis, keepdims: ctx.attrs.int_or("keepdims", 1)? != 0 }
        }
        "ConcatFromSequence" => {
            let new_axis = ctx.attrs.int_or("new_axis", 0)? != 0;
            let axis = ctx.attrs.int("axis")?.ok_or_else(|| ctx.error("axis is required"))?;
            let rank = sequence(ctx)?.rank() + usize::from(new_axis);
            let axis = super::common::normalize_axis(axis, rank).map_err(|m| ctx.error(m))?;
            SequenceOp::ConcatFromSequence { axis, new_axis }
        }
        "Optional" => match ctx.inputs.first().copied().flatten() {
            Some(_) => SequenceOp::Wrap,
            None => SequenceOp::None { ty: declared_optional(ctx)? },
        },
        "OptionalHasElement" | "OptionalGetElement" => return parse_optional_read(ctx),
        other => return Err(ctx.error(format!("{other} is not a sequence op"))),
    };
    Ok(Parsed::new(Op::Sequence(op), ctx.inputs.len()))
}

/// Input 0, which must be a sequence.
fn sequence<'a>(ctx: &NodeCtx<'a>) -> Result<&'a TensorType> {
    let ty = ctx.input_type(0)?;
    match ty.holder {
        Holder::Sequence | Holder::EmptySequence => Ok(ty),
        _ => Err(ctx.error(format!("input 0 must be a sequence, got {ty}"))),
    }
}

/// `Optional()`'s `type` attribute: the optional it makes.
fn declared_optional(ctx: &NodeCtx) -> Result<TensorType> {
    let ty =
        ctx.attrs.type_proto("type")?.ok_or_else(|| ctx.error("without an input, the `type` attribute is required"))?;
    let ty = crate::types::type_of(ty).map_err(|m| ctx.error(format!("attribute `type`: {m}")))?;
    match ty.holder {
        Holder::Tensor => Ok(ty.held(Holder::Optional)),
        Holder::Sequence => Ok(ty.held(Holder::OptionalSequence)),
        _ => Err(ctx.error(format!("an optional of {ty} is not supported"))),
    }
}

/// `OptionalHasElement` and `OptionalGetElement`. Without an input (opset 18's empty optional)
/// there is no element; a plain tensor or sequence (opset 18) always is one. Both are known at
/// import but for an optional value.
fn parse_optional_read(ctx: &NodeCtx) -> Result<Parsed> {
    let has = ctx.op_type == "OptionalHasElement";
    let Some(input) = ctx.inputs.first().copied().flatten() else {
        return match has {
            true => Ok(Parsed::folded(TensorData::new(DType::Bool, vec![], vec![0]))),
            false => Err(ctx.error("the input is empty: there is no element to get")),
        };
    };
    if input.ty.holder.is_optional() {
        let op = if has { SequenceOp::HasElement } else { SequenceOp::GetElement };
        return Ok(Parsed::new(Op::Sequence(op), 1));
    }
    if ctx.opset < 18 {
        return Err(ctx.error(format!("the input must be an optional before opset 18, got {}", input.ty)));
    }
    Ok(match has {
        true => Parsed::folded(TensorData::new(DType::Bool, vec![], vec![1])),
        false => Parsed::new(Op::Identity(IdentityConfig), 1),
    })
}

/// Why a tensor of type `t` cannot join sequence `seq`, if it cannot: a sequence's tensors
/// share one dtype and rank.
fn joins(seq: &TensorType, t: &TensorType) -> Result<TensorType, String> {
    if !t.is_tensor() {
        return Err(format!("only tensors can join a sequence, got {t}"));
    }
    if seq.holder == Holder::EmptySequence && seq.dtype == t.dtype {
        return Ok(t.clone().held(Holder::Sequence));
    }
    if seq.dtype != t.dtype || seq.rank() != t.rank() {
        return Err(format!("a {t} cannot join a {seq}: the tensors of a sequence must share one dtype and rank"));
    }
    let merged = seq.shape.iter().zip(&t.shape).map(|(a, b)| if a == b { a.clone() } else { Dim::Unknown });
    Ok(TensorType::new(seq.dtype, merged.collect()).held(Holder::Sequence))
}

/// An integer scalar (a position): its reason, if `t` is not one.
fn position(t: &TensorType, what: &str) -> Result<(), String> {
    let one = t.static_shape().is_some_and(|s| s.iter().product::<usize>() == 1);
    match t.is_tensor() && t.dtype.kind() == Kind::Int && one {
        true => Ok(()),
        false => Err(format!("{what} must be an integer scalar, got {t}")),
    }
}

/// A tensor of the (non-empty) sequence: its reason if `seq` is empty at import.
fn element(seq: &TensorType, op: &str) -> Result<TensorType, String> {
    match seq.holder {
        Holder::Sequence => Ok(seq.tensor()),
        _ => Err(format!("{op} of a sequence that is always empty here ({seq})")),
    }
}

pub fn infer(op: &SequenceOp, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
    let one = |t: TensorType| Ok(vec![t]);
    let int_scalar = || TensorType::new(DType::I64, vec![]);
    match op {
        SequenceOp::Empty { dtype } => one(TensorType::new(*dtype, vec![]).held(Holder::EmptySequence)),
        SequenceOp::Construct => {
            let (first, rest) = inputs.split_first().ok_or("SequenceConstruct needs a tensor")?;
            let seq = joins(&TensorType::new(first.dtype, vec![]).held(Holder::EmptySequence), first)?;
            one(rest.iter().try_fold(seq, |seq, t| joins(&seq, t))?)
        }
        SequenceOp::Insert => {
            if let Some(p) = inputs.get(2) {
                position(p, "the position")?;
            }
            one(joins(inputs[0], inputs[1])?)
        }
        SequenceOp::At => {
            position(inputs[1], "the position")?;
            one(element(inputs[0], "SequenceAt")?)
        }
        SequenceOp::Erase => {
            if let Some(p) = inputs.get(1) {
                position(p, "the position")?;
            }
            element(inputs[0], "SequenceErase")?;
            one(inputs[0].clone())
        }
        SequenceOp::Length => one(int_scalar()),
        SequenceOp::SplitToSequence { axis, keepdims } => {
            let x = inputs[0];
            let mut shape = x.shape.clone();
            match inputs.get(1) {
                None if *keepdims => shape[*axis] = Dim::Static(1),
                None => {
                    shape.remove(*axis);
                }
                Some(split) if split.dtype.kind() == Kind::Int && split.rank() <= 1 => shape[*axis] = Dim::Unknown,
                Some(split) => return Err(format!("split must be an integer scalar or 1-D tensor, got {split}")),
            }
            one(TensorType::new(x.dtype, shape).held(Holder::Sequence))
        }
        SequenceOp::ConcatFromSequence { axis, new_axis } => {
            let mut t = element(inputs[0], "ConcatFromSequence")?;
            match new_axis {
                true => t.shape.insert(*axis, Dim::Unknown),
                false => t.shape[*axis] = Dim::Unknown,
            }
            one(t)
        }
        SequenceOp::Wrap => match inputs[0].holder {
            Holder::Tensor => one(inputs[0].clone().held(Holder::Optional)),
            Holder::Sequence => one(inputs[0].clone().held(Holder::OptionalSequence)),
            _ => Err(format!("an optional of {} is not supported", inputs[0])),
        },
        SequenceOp::None { ty } => one(ty.clone()),
        SequenceOp::HasElement => one(TensorType::new(DType::Bool, vec![])),
        SequenceOp::GetElement => match inputs[0].holder {
            Holder::Optional => one(inputs[0].tensor()),
            _ => one(inputs[0].clone().held(Holder::Sequence)),
        },
    }
}

impl InferOp for SequenceOp {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        infer(self, inputs)
    }
}
